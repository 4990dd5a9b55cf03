"""The sentences a refused control decision is said in: one per refusal of the control table, and
the presence problem that explains the "unknown" one."""

from __future__ import annotations

from kronii.broker.core.machine import Decision
from kronii.broker.core.model import ControlState
from kronii.broker.core.table import Refusal
from kronii.foundation.errors import FailedPrecondition, InvalidArgument

__all__ = ["lease_ms", "refused"]

_REFUSED: dict[Refusal, str] = {
    Refusal.NOT_INTERACTIVE: (
        "no person is attached to this desktop session, so there is nothing to grant: an agent takes a "
        "session nobody watches with acquire"
    ),
    Refusal.GRANT_NEEDED: (
        "a person is at this desktop: an agent gets control only when the desktop user grants it "
        "(`kronii control grant {agent}`)"
    ),
    Refusal.STOPPED_BY_USER: (
        "the desktop user stopped agents here (STOP_NOW): control comes back only when they grant it "
        "or choose WAIT"
    ),
    Refusal.POLICY: "the operator does not let agents take a desktop without a grant (allow_headless_acquire)",
    Refusal.HELD: "another agent holds this desktop's lease",
    Refusal.NO_LEASE: "this agent does not hold a live lease on this desktop",
    Refusal.OVERRIDE_PENDING: (
        "the desktop user asked agents to pause (SAFE_INTERRUPT): stop at your next safe point; "
        "the lease is not renewed"
    ),
    Refusal.PRESENCE_UNKNOWN: (
        "{cause}, so it cannot tell whether a person watches: until it can, an agent gets this desktop "
        "only when the desktop user grants it (`kronii control grant {agent}`)"
    ),
}
# The cause when the desktop has none to give (it always has one while presence is unknown).
_UNKNOWN_CAUSE = "the broker cannot see the desktop's viewers"


def refused(decision: Decision, presence_problem: str = "", agent: str = "") -> ControlState:
    """The decision's state, or FailedPrecondition with the sentence of its refusal (naming ``agent``,
    the caller, in the grant the person would type)."""
    if decision.refusal is not None:
        cause = presence_problem or _UNKNOWN_CAUSE
        raise FailedPrecondition(_REFUSED[decision.refusal].format(cause=cause, agent=agent or "AGENT"))
    return decision.state


def lease_ms(lease_seconds: int, default_ms: int) -> int:
    """The lease a command asks for, in ms: 0 seconds is the default."""
    if lease_seconds < 0:
        raise InvalidArgument("lease_seconds must not be negative", field="lease_seconds")
    return lease_seconds * 1000 if lease_seconds else default_ms
