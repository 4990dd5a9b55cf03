"""The seed's control state model (seed 004, "Control State Model"), as plain values.

One ControlState per desktop session. Everything that changes it is an Event; the table in
`core.table` says what each event does in each state, and `core.machine` applies it. Times are
milliseconds passed in by the caller: nothing here reads a clock.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = [
    "AgentStatus",
    "ControlMode",
    "ControlState",
    "DropReason",
    "SafePointAction",
    "UserIntent",
]


class ControlMode(enum.StrEnum):
    USER = "USER"
    AGENT = "AGENT"


class UserIntent(enum.StrEnum):
    WAIT = "WAIT"
    SAFE_INTERRUPT = "SAFE_INTERRUPT"
    STOP_NOW = "STOP_NOW"


class AgentStatus(enum.StrEnum):
    IDLE = "IDLE"
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    STOPPING = "STOPPING"
    STOPPED = "STOPPED"


class SafePointAction(enum.StrEnum):
    CONTINUE = "CONTINUE"
    PAUSE = "PAUSE"
    STOP = "STOP"


class DropReason(enum.StrEnum):
    """Why an agent's input event did not reach the desktop (a metric label and the API's answer)."""

    USER_CONTROL = "user_control"
    NO_LEASE = "no_lease"
    LEASE_EXPIRED = "lease_expired"
    STALE_EPOCH = "stale_epoch"
    PAUSED = "paused"
    NOT_HOLDER = "not_holder"
    STOPPED = "stopped"
    QUEUE_FULL = "queue_full"


@dataclass(frozen=True)
class ControlState:
    """Who holds one desktop session's input.

    ``epoch`` grows with every grant, stop, override, release and expiry: input queued under an
    older epoch is dropped, so nothing an agent sent lands after a stop. ``granted_by_user`` tells a
    lease the person granted from one taken by policy in a non-interactive session (P3), which a
    viewer attaching revokes. ``user_holds_until_ms`` is set when the person took the desktop back;
    the rest of the mesh leaves the desktop alone until then."""

    session_id: str
    interactive: bool = False
    interactive_reason: str = ""
    control_mode: ControlMode = ControlMode.USER
    lease_expiry_ms: int | None = None
    user_intent: UserIntent = UserIntent.WAIT
    agent_status: AgentStatus = AgentStatus.IDLE
    epoch: int = 0
    holder: str = ""
    window: int = 0
    granted_by_user: bool = False
    user_holds_until_ms: int | None = None

    def lease_live(self, now_ms: int) -> bool:
        return (
            self.control_mode is ControlMode.AGENT
            and self.lease_expiry_ms is not None
            and now_ms < self.lease_expiry_ms
        )

    def held_by(self, agent: str, now_ms: int) -> bool:
        return self.lease_live(now_ms) and self.holder == agent

    def user_holds(self, now_ms: int) -> bool:
        return self.user_holds_until_ms is not None and now_ms < self.user_holds_until_ms
