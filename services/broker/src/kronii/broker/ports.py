"""What the broker's use cases need of the outside world; the adapters implement these, and the
unit tests' fakes do too. Ports take and return core values only."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from kronii.broker.core.callers import Caller
from kronii.broker.core.facts import CallFacts, UnbrokeredInput, UserInputSeen
from kronii.broker.core.model import ControlState
from kronii.broker.core.results import AgentSession, SignInChallenge
from kronii.desktop.input_actions import InputAction

__all__ = [
    "AgentSignIn",
    "ControlJournal",
    "ControlPublisher",
    "DesktopWitness",
    "Gatekeeper",
    "InjectionGuard",
    "Injector",
    "LeaseNotifier",
]


@dataclass(frozen=True)
class InjectionGuard:
    """What an action is injected under: the epoch it was sent with, ``still_valid`` (asked before
    every X event, from the injector's thread) and ``person_seen`` (called from that thread when the
    injector itself saw a person's event among the X server's, before the watcher's news came)."""

    epoch: int
    still_valid: Callable[[], bool]
    person_seen: Callable[[], None]


class Injector(Protocol):
    """Sends one action to the X server through the broker's own device. Blocking: the
    orchestration calls it in a worker thread. ``guard.still_valid`` is asked before every X event;
    when it says no, or the person's input is seen, nothing more is sent and the answer is False."""

    def inject(self, action: InputAction, window: int, guard: InjectionGuard) -> bool: ...


class ControlPublisher(Protocol):
    async def publish(self, state: ControlState, cause: str, signal: str) -> None: ...


class ControlJournal(Protocol):
    """The seed's JSON-lines log: every control change, intent, override, stop, pause and
    safe-point decision, with the session id and a timestamp."""

    def write(self, record: dict[str, Any]) -> None: ...


class LeaseNotifier(Protocol):
    """The desktop notification with Wait / Interrupt / Stop while an agent holds a lease."""

    async def show_lease(self, state: ControlState) -> None: ...

    async def show_notice(self, title: str, sentence: str) -> None:
        """A notice without buttons, apart from the lease's bubble (closing that one leaves it)."""
        ...

    async def close(self) -> None: ...


class DesktopWitness(Protocol):
    """What the desktop's adapters (the X watcher, the device count, remote viewing) report: the
    use case that follows the person (usecases.track_presence.Attachment) turns it into events.
    Called on the event loop, except close_fence."""

    def close_fence(self, cause: str) -> bool:
        """From the thread that saw the person's input (or a STOP), before the loop hears of it:
        no agent event is written under the current epoch after this. True when it was open."""
        ...

    def fence_still_closed(self) -> bool:
        """From any thread: no lease has begun since the fence last closed (the watcher's measure of
        what reached the screen after the person's event stops at a new lease)."""
        ...

    def user_input(self, seen: UserInputSeen) -> None: ...

    def unbrokered_input(self, found: UnbrokeredInput) -> None:
        """Input from the core XTEST device (not the broker's, not a person's device), with the
        programs that may have sent it; the watcher closed the fence already."""
        ...

    def at_screen(self, delay_s: float, late_events: int) -> None:
        """After a person's event interrupted an agent: its events the X server still took, and the
        person's event to the last of them."""
        ...

    def stop_keys(self) -> None: ...

    def devices(self, count: int) -> None: ...

    def viewers(self, count: int) -> None: ...

    def viewers_unseen(self, problem: str) -> None:
        """Why the broker cannot see its viewers now (a sentence), or "" once it can again."""
        ...


class AgentSignIn(Protocol):
    """Agents' Ed25519 sign-in: a registered key signs a one-time nonce; the session token that
    comes back is what every agent call carries."""

    async def begin(self, client_id: str) -> SignInChallenge: ...

    async def authenticate(self, challenge_id: str, client_id: str, signature: bytes) -> AgentSession: ...

    async def resolve(self, token: str) -> str | None:
        """The client id of a live session, or None."""
        ...


class Gatekeeper(Protocol):
    """Who is calling, from the transport: an agent session, the desktop's person (the local socket
    and a person's proof, asked only when ``need_person``), or another local process."""

    async def caller(self, facts: CallFacts, *, need_person: bool = False) -> Caller: ...
