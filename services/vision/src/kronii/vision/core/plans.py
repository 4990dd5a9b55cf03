"""A plan's life as a table: (state, event) -> next state. Anything not in the table is refused with
the sentence `refusal` gives, so an approval after a denial, or a second execution, cannot happen."""

from __future__ import annotations

import enum

__all__ = ["TRANSITIONS", "PlanEvent", "PlanState", "next_state", "refusal"]


class PlanState(enum.StrEnum):
    AWAITING_CONFIRMATION = "awaiting_confirmation"
    READY = "ready"
    EXECUTING = "executing"
    DONE = "done"
    FAILED = "failed"
    STOPPED = "stopped"
    DENIED = "denied"
    BLOCKED = "blocked"
    STALE = "stale"
    EXPIRED = "expired"


class PlanEvent(enum.StrEnum):
    APPROVE = "approve"
    DENY = "deny"
    START = "start"
    FINISH = "finish"
    FAIL = "fail"
    STOP = "stop"
    SCREEN_CHANGED = "screen_changed"
    EXPIRE = "expire"


_S, _E = PlanState, PlanEvent
TRANSITIONS: dict[tuple[PlanState, PlanEvent], PlanState] = {
    (_S.AWAITING_CONFIRMATION, _E.APPROVE): _S.READY,
    (_S.AWAITING_CONFIRMATION, _E.DENY): _S.DENIED,
    (_S.AWAITING_CONFIRMATION, _E.SCREEN_CHANGED): _S.STALE,
    (_S.AWAITING_CONFIRMATION, _E.EXPIRE): _S.EXPIRED,
    (_S.READY, _E.START): _S.EXECUTING,
    (_S.READY, _E.DENY): _S.DENIED,
    (_S.READY, _E.SCREEN_CHANGED): _S.STALE,
    (_S.READY, _E.EXPIRE): _S.EXPIRED,
    (_S.EXECUTING, _E.FINISH): _S.DONE,
    (_S.EXECUTING, _E.FAIL): _S.FAILED,
    (_S.EXECUTING, _E.STOP): _S.STOPPED,
    (_S.EXECUTING, _E.SCREEN_CHANGED): _S.STALE,
}

TERMINAL = frozenset({_S.DONE, _S.FAILED, _S.STOPPED, _S.DENIED, _S.BLOCKED, _S.STALE, _S.EXPIRED})


def next_state(state: PlanState, event: PlanEvent) -> PlanState | None:
    return TRANSITIONS.get((state, event))


def refusal(state: PlanState, event: PlanEvent) -> str:
    if state is PlanState.AWAITING_CONFIRMATION and event is PlanEvent.START:
        return "the plan needs a person's approval before it runs"
    return f"a plan that is {state.value.replace('_', ' ')} cannot be {_PAST[event]}"


_PAST = {
    _E.APPROVE: "approved",
    _E.DENY: "denied",
    _E.START: "started",
    _E.FINISH: "finished",
    _E.FAIL: "failed",
    _E.STOP: "stopped",
    _E.SCREEN_CHANGED: "marked stale",
    _E.EXPIRE: "expired",
}
