"""What the runner keeps between rounds (Idle, Cooling, Deferred, the lock, the rate-limit ledgers
and the Router's and Planner's histories) and the stepping of a round through the core's table,
each step recorded in the run."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from kronii.desktop.hold import DesktopHolds
from kronii.foundation.clock import Clock
from kronii.pipeline.core.deferral import Deferral
from kronii.pipeline.core.intake import Batch
from kronii.pipeline.core.limits import RateLedger
from kronii.pipeline.core.machine import Facts, NoTransition, Step, step
from kronii.pipeline.core.roles.values import PlanHistory
from kronii.pipeline.core.round import Round, RunnerConfig
from kronii.pipeline.core.router import RouterHistory, RouterLimits
from kronii.pipeline.core.runs import StateVisit
from kronii.pipeline.core.states import CapturePreemption, RunState, Trigger, TriggerKind
from kronii.pipeline.core.table import Action
from kronii.pipeline.ports import RunSink

__all__ = ["RoundAborted", "Standing", "Stepper"]

# What a round keeps waiting for while its own work runs: more would only be coalesced away.
_MAX_WAITING_BATCHES = 16
# What seed row 3 does not backfill after a deferral: the kinds that come in bursts.
_HIGH_FREQUENCY_KINDS = frozenset({TriggerKind.TITLE_CHANGED, TriggerKind.ACTIVITY_PULSE})


def _new_preempt_queue() -> asyncio.Queue[Trigger]:
    return asyncio.Queue()


@dataclass
class Standing:
    """The machine between rounds and what its rounds share; `current` is the round under way."""

    state: RunState = RunState.IDLE
    locked: bool = False
    # The input broker's latest word on each session: while the person holds the desktop, no action.
    desktop_holds: DesktopHolds = field(default_factory=DesktopHolds)
    deferral: Deferral | None = None
    cooling_until_ms: int = 0
    run_ledger: RateLedger = field(default_factory=RateLedger)
    capture_ledger: RateLedger = field(default_factory=RateLedger)
    router_history: RouterHistory = field(default_factory=RouterHistory)
    router_limits: RouterLimits = field(default_factory=RouterLimits)
    plan_history: PlanHistory = field(default_factory=lambda: PlanHistory(0))
    waiting: deque[Batch] = field(default_factory=lambda: deque(maxlen=_MAX_WAITING_BATCHES))
    # High-priority triggers that arrived while the round waited for a capture (additional guard 1).
    preempt: asyncio.Queue[Trigger] = field(default_factory=_new_preempt_queue)
    current: Round | None = None
    scheduler_answered: bool | None = None
    last_preemption: CapturePreemption = CapturePreemption.CANCEL
    runs_started: int = 0
    # What each of the latest runs noted on its way (capture outcome, refusals, deferrals).
    recent_notes: deque[tuple[str, tuple[str, ...]]] = field(default_factory=lambda: deque(maxlen=20))
    model_calls: int = 0


class RoundAborted(Exception):
    """The table had no row for what happened: the round ends where it is (logged, recorded)."""


class Stepper:
    """Moves a round along the table's rows: records the visit, does the row's book-keeping actions
    and saves the run as it goes."""

    def __init__(self, standing: Standing, runs: RunSink, config: RunnerConfig, clock: Clock) -> None:
        self._standing = standing
        self._runs = runs
        self._config = config
        self._clock = clock

    async def move(self, current: Round, moved: Step | NoTransition) -> None:
        if isinstance(moved, NoTransition):
            raise RoundAborted(f"no row: {moved.reason}")
        now = self._clock.monotonic_ms()
        wall = self._clock.wall_ms()  # the record's times; the ledgers measure on `now`
        visits = list(current.record.states)
        if visits:
            visits[-1] = replace(visits[-1], left_at_ms=wall)
        visits.append(StateVisit(moved.target.value, wall))
        current.record = replace(current.record, states=tuple(visits))
        current.state = moved.target
        await self._act(current, moved.actions, now)
        with contextlib.suppress(Exception):
            await self._runs.save(current.record)

    async def internal(self, current: Round, facts: Facts, kind: TriggerKind = TriggerKind.INTERNAL) -> None:
        await self.move(current, step(current.state, Trigger(kind, self._clock.monotonic_ms()), facts))

    async def _act(self, current: Round, actions: Sequence[Action], now: int) -> None:
        """Book-keeping actions; the work of each state is done by the round before it steps on."""
        standing = self._standing
        for action in actions:
            if action is Action.RECORD_RUN and not current.admitted:
                standing.run_ledger = standing.run_ledger.record(current.app, now, self._config.run_limits)
                current.admitted = True
            elif action is Action.RECORD_CAPTURE:
                standing.capture_ledger = standing.capture_ledger.record(
                    current.app, now, self._config.capture_limits
                )
            elif action is Action.DROP_HIGH_FREQUENCY_BACKLOG:
                kept = [b for b in standing.waiting if b.kind not in _HIGH_FREQUENCY_KINDS]
                standing.waiting.clear()
                standing.waiting.extend(kept)
