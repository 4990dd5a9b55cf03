"""Who may do what at the broker, as a table. Who a caller is comes from the transport, never
from what the caller says: "person" is the desktop's own user through the broker's local socket
with a person's proof of presence (or the broker's own STOP keys and notification buttons),
"agent" is a signed-in agent session, "local" is any other process of the same user."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Literal

from kronii.foundation.errors import KroniiError, PermissionDenied, Unauthenticated

__all__ = ["Caller", "CallerKind", "Operation", "check", "refusal"]

CallerKind = Literal["person", "agent", "local"]


class Operation(enum.StrEnum):
    READ = "read"
    STOP_NOW = "stop_now"
    SAFE_INTERRUPT = "safe_interrupt"
    WAIT = "wait"
    GRANT = "grant"
    EXTEND = "extend"
    ACQUIRE = "acquire"
    RENEW = "renew"
    RELEASE = "release"
    SAFE_POINT = "safe_point"
    INPUT = "input"


@dataclass(frozen=True)
class Caller:
    kind: CallerKind
    actor: str
    # The agent's client id for an agent session.
    agent: str = ""


_PERSON_ONLY = (
    "only the desktop user can do this, at the desktop: run `kronii control grant` (or wait) from a "
    "terminal there, through the broker's local socket"
)
_NOT_AN_AGENT = "an agent cannot grant control or lift an interrupt: only the desktop user can"
_AGENT_ONLY = (
    "this call is for agents: sign in with a registered key (`kronii broker clients add`) and send "
    "Authorization: Bearer <session token>"
)

# Stopping and pausing only ever take power away from agents, so anyone the mesh admits may ask.
_ALLOWED: dict[Operation, frozenset[CallerKind]] = {
    Operation.READ: frozenset({"person", "agent", "local"}),
    Operation.STOP_NOW: frozenset({"person", "agent", "local"}),
    Operation.SAFE_INTERRUPT: frozenset({"person", "agent", "local"}),
    Operation.WAIT: frozenset({"person"}),
    Operation.GRANT: frozenset({"person"}),
    Operation.EXTEND: frozenset({"person"}),
    Operation.ACQUIRE: frozenset({"agent"}),
    Operation.RENEW: frozenset({"agent"}),
    Operation.RELEASE: frozenset({"agent"}),
    Operation.SAFE_POINT: frozenset({"agent"}),
    Operation.INPUT: frozenset({"agent"}),
}


def refusal(caller: Caller, operation: Operation) -> KroniiError | None:
    """The error for a caller that may not do ``operation``, or None when it may."""
    if caller.kind in _ALLOWED[operation]:
        return None
    if _ALLOWED[operation] == frozenset({"agent"}):
        return Unauthenticated(_AGENT_ONLY)
    if caller.kind == "agent":
        return PermissionDenied(_NOT_AN_AGENT)
    return PermissionDenied(_PERSON_ONLY)


def check(caller: Caller, operation: Operation) -> None:
    error = refusal(caller, operation)
    if error is not None:
        raise error
