"""Applies the table in `core.table`: one event, the state before, the time now, the operator's
policy; out come the state after and what the orchestration must do. Pure: no clock, no I/O."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from kronii.broker.core.interactive import UNKNOWN
from kronii.broker.core.model import (
    AgentStatus,
    ControlMode,
    ControlState,
    DropReason,
    SafePointAction,
    UserIntent,
)
from kronii.broker.core.table import Action, Event, Guard, Hold, Lease, Refusal, Row, rows_for

__all__ = ["Decision", "Happening", "Policy", "decide"]


@dataclass(frozen=True)
class Policy:
    """The operator's settings the rules read. ``hold_ms``: how long the mesh leaves the desktop
    alone after the person took it back."""

    allow_headless_acquire: bool = True
    max_lease_ms: int = 300_000
    hold_ms: int = 30_000


@dataclass(frozen=True)
class Happening:
    """One event with what it carries: the calling agent, the lease asked for, the window a grant
    names, the epoch an agent's input names (0: the current one), why a session became interactive."""

    event: Event
    agent: str = ""
    lease_ms: int = 0
    window: int = 0
    epoch: int = 0
    reason: str = ""


@dataclass(frozen=True)
class Decision:
    row: Row
    before: ControlState
    state: ControlState

    @property
    def changed(self) -> bool:
        return self.state != self.before

    @property
    def actions(self) -> tuple[Action, ...]:
        return self.row.actions

    @property
    def refusal(self) -> Refusal | None:
        return self.row.refusal

    @property
    def drop(self) -> DropReason | None:
        return self.row.drop

    @property
    def answer(self) -> SafePointAction | None:
        return self.row.answer

    @property
    def signal(self) -> str:
        return self.row.signal


_Check = Callable[[ControlState, Happening, int, Policy], bool]

_GUARDS: dict[Guard, _Check] = {
    Guard.INTERACTIVE: lambda s, h, now, p: s.interactive,
    Guard.NOT_INTERACTIVE: lambda s, h, now, p: not s.interactive,
    Guard.MODE_AGENT: lambda s, h, now, p: s.control_mode is ControlMode.AGENT,
    Guard.MODE_USER: lambda s, h, now, p: s.control_mode is ControlMode.USER,
    Guard.LEASE_LIVE: lambda s, h, now, p: s.lease_live(now),
    Guard.LEASE_ENDED: lambda s, h, now, p: s.control_mode is ControlMode.AGENT and not s.lease_live(now),
    Guard.CALLER_HOLDS: lambda s, h, now, p: s.held_by(h.agent, now),
    Guard.CALLER_NOT_HOLDER: lambda s, h, now, p: not s.held_by(h.agent, now),
    Guard.HELD_BY_OTHER: lambda s, h, now, p: s.lease_live(now) and s.holder != h.agent,
    Guard.STALE_EPOCH: lambda s, h, now, p: h.epoch != 0 and h.epoch != s.epoch,
    Guard.INTERRUPT_PENDING: lambda s, h, now, p: s.user_intent is UserIntent.SAFE_INTERRUPT,
    Guard.STOP_SET: lambda s, h, now, p: s.user_intent is UserIntent.STOP_NOW,
    Guard.AGENT_STOPPED: lambda s, h, now, p: s.agent_status is AgentStatus.STOPPED,
    Guard.AGENT_PAUSED: lambda s, h, now, p: s.agent_status is AgentStatus.PAUSED,
    Guard.POLICY_REFUSES: lambda s, h, now, p: not p.allow_headless_acquire,
    Guard.NOT_GRANTED_BY_USER: lambda s, h, now, p: not s.granted_by_user,
    Guard.GRANTED_BY_USER: lambda s, h, now, p: s.granted_by_user,
    Guard.PRESENCE_UNKNOWN: lambda s, h, now, p: s.interactive_reason == UNKNOWN,
    Guard.BECOMES_UNKNOWN: lambda s, h, now, p: h.reason == UNKNOWN,
}


def _row(state: ControlState, happening: Happening, now_ms: int, policy: Policy) -> Row:
    for row in rows_for(happening.event):
        if all(_GUARDS[guard](state, happening, now_ms, policy) for guard in row.guards):
            return row
    raise AssertionError(f"the table has no last row for {happening.event}")  # pragma: no cover


def _lease(state: ControlState, row: Row, happening: Happening, now_ms: int, policy: Policy) -> ControlState:
    length = min(max(happening.lease_ms, 0), policy.max_lease_ms)
    if row.change.lease is Lease.SET:
        return replace(
            state, lease_expiry_ms=now_ms + length, holder=happening.agent, window=happening.window
        )
    if row.change.lease is Lease.EXTEND:
        return replace(state, lease_expiry_ms=now_ms + length)
    if row.change.lease is Lease.CLEAR:
        return replace(state, lease_expiry_ms=None, holder="", window=0, granted_by_user=False)
    return state


def _apply(state: ControlState, row: Row, happening: Happening, now_ms: int, policy: Policy) -> ControlState:
    change = row.change
    after = _lease(state, row, happening, now_ms, policy)
    if change.mode is not None:
        after = replace(after, control_mode=change.mode)
    if change.intent is not None:
        after = replace(after, user_intent=change.intent)
    if change.status is not None:
        after = replace(after, agent_status=change.status)
    if change.granted_by_user is not None:
        after = replace(after, granted_by_user=change.granted_by_user)
    if change.bump_epoch:
        after = replace(after, epoch=after.epoch + 1)
    if change.hold is Hold.START:
        after = replace(after, user_holds_until_ms=now_ms + policy.hold_ms)
    elif change.hold is Hold.CLEAR:
        after = replace(after, user_holds_until_ms=None)
    if change.interactive is not None:
        reason = happening.reason if change.interactive else ""
        after = replace(after, interactive=change.interactive, interactive_reason=reason)
    return after


def decide(state: ControlState, happening: Happening, now_ms: int, policy: Policy | None = None) -> Decision:
    """The table's answer to one event: the first row of the event whose guards all hold."""
    rules = policy or Policy()
    row = _row(state, happening, now_ms, rules)
    return Decision(row, state, _apply(state, row, happening, now_ms, rules))
