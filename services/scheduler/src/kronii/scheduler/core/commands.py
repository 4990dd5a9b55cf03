"""What the scheduler's use cases take and give back. The commands arrive on the wall clock (a
person's or a Planner's times); the use cases keep every time on the duration clock and answer on the
wall clock again, so every time in a result here is wall time (epoch seconds) unless it is a length.

The admission's command and result are the core's own `AdmitInput` and `Admission` (core/model.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kronii.scheduler.core.model import Cooldown, PlanInput, TickKind, WakeUp

__all__ = [
    "CooldownState",
    "FiredTick",
    "PendingWakeup",
    "PlanCommand",
    "PlanOutcome",
    "RunCount",
    "ScheduleSnapshot",
]


@dataclass(frozen=True)
class PlanCommand:
    """A Planner's plan as received (NATS, HTTP or gRPC); `wakeup_at` is on the wall clock."""

    run_id: str = ""
    app: str = ""
    wakeup_at: float | None = None
    wakeup_in_secs: float | None = None
    min_cooldown_secs: float = 0.0
    trigger_filters: tuple[str, ...] = ()
    reason: str = ""

    def on_duration_clock(self, wall_offset: float) -> PlanInput:
        """The plan with its wall time taken back to the duration clock (`wall_offset` is wall time
        minus duration-clock time, read once per request)."""
        return PlanInput(
            run_id=self.run_id,
            app=self.app,
            wakeup_at=self.wakeup_at - wall_offset if self.wakeup_at is not None else None,
            wakeup_in_secs=self.wakeup_in_secs,
            min_cooldown_secs=self.min_cooldown_secs,
            trigger_filters=self.trigger_filters,
            reason=self.reason,
        )


@dataclass(frozen=True)
class PlanOutcome:
    """What a plan set, on the wall clock: the slot's wake-up, the cooldown's end, the filters'
    ends. Empty when the plan changed nothing (it was ignored)."""

    wakeup_id: str = ""
    wakeup_at: float | None = None
    cooldown_until: float | None = None
    filters: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class PendingWakeup:
    """A wake-up as shown: its times on the wall clock, and how long until it is due."""

    wakeup: WakeUp
    due_in_secs: float


@dataclass(frozen=True)
class CooldownState:
    """The cooldown as shown: its end on the wall clock, and how long it has left."""

    cooldown: Cooldown
    remaining_secs: float


@dataclass(frozen=True)
class RunCount:
    scope: str
    runs_last_hour: int
    ceiling_per_hour: int


@dataclass(frozen=True)
class ScheduleSnapshot:
    """The schedule as shown: pending wake-ups, the cooldown (None: none active), live filters,
    the run counters and the ceilings."""

    now: float
    wakeups: tuple[PendingWakeup, ...]
    cooldown: CooldownState | None
    filters: Mapping[str, float]
    global_runs: RunCount
    app_runs: tuple[RunCount, ...]
    global_ceiling_per_hour: int
    app_ceiling_per_hour: int


@dataclass(frozen=True)
class FiredTick:
    """A due wake-up fired: what the Tick says, on the wall clock."""

    wakeup_id: str
    due_at: float
    fired_at: float
    kind: TickKind
    app: str = ""
    run_id: str = ""
    reason: str = ""
