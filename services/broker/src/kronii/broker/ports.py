"""What the broker's orchestration needs of the outside world; the adapters implement these, and
the unit tests' fakes do too."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from kronii.broker.core.callers import Caller
from kronii.broker.core.model import ControlState
from kronii.common.audit_trail import AuditTrail
from kronii.common.desktop_input import InputAction

__all__ = [
    "AgentSession",
    "AgentSignIn",
    "AuditTrail",
    "CallFacts",
    "ControlJournal",
    "ControlPublisher",
    "Gatekeeper",
    "Injector",
    "LeaseNotifier",
    "SignInChallenge",
    "UserInputSeen",
]


@dataclass(frozen=True)
class UserInputSeen:
    """An input event the X server says did not come from the broker: the person's. ``at`` is the
    monotonic time the watcher read it, for the revocation latency."""

    kind: Literal["key", "button", "motion"]
    source_id: int
    source_name: str
    at: float


class Injector(Protocol):
    """Sends one action to the X server through the broker's own device. Blocking: the
    orchestration calls it in a worker thread. ``still_valid`` is asked before every X event; when
    it says no, nothing more is sent and the answer is False."""

    def inject(self, action: InputAction, window: int, still_valid: Callable[[], bool]) -> bool: ...


class ControlPublisher(Protocol):
    async def publish(self, state: ControlState, cause: str, signal: str) -> None: ...


class ControlJournal(Protocol):
    """The seed's JSON-lines log: every control change, intent, override, stop, pause and
    safe-point decision, with the session id and a timestamp."""

    def write(self, record: dict[str, Any]) -> None: ...


class LeaseNotifier(Protocol):
    """The desktop notification with Wait / Interrupt / Stop while an agent holds a lease."""

    async def show_lease(self, state: ControlState) -> None: ...

    async def close(self) -> None: ...



@dataclass(frozen=True)
class SignInChallenge:
    challenge_id: str
    nonce: bytes


@dataclass(frozen=True)
class AgentSession:
    client_id: str
    token: str
    expires_at_ms: int


class AgentSignIn(Protocol):
    """Agents' Ed25519 sign-in: a registered key signs a one-time nonce; the session token that
    comes back is what every agent call carries."""

    async def begin(self, client_id: str) -> SignInChallenge: ...

    async def authenticate(self, challenge_id: str, client_id: str, signature: bytes) -> AgentSession: ...

    async def resolve(self, token: str) -> str | None:
        """The client id of a live session, or None."""
        ...


@dataclass(frozen=True)
class CallFacts:
    """What the transport says about a call: the peer's address (a loopback port the local socket
    registered, for a person), the Authorization header, and the TTY binding's claim."""

    peer_host: str
    peer_port: int
    authorization: str = ""
    tty: str = ""
    session: str = ""


class Gatekeeper(Protocol):
    """Who is calling, from the transport: an agent session, the desktop's person (the local socket
    and a person's proof, asked only when ``need_person``), or another local process."""

    async def caller(self, facts: CallFacts, *, need_person: bool = False) -> Caller: ...
