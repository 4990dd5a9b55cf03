"""What the runner keeps: its settings, the machine's standing between rounds (Idle, Cooling,
Deferred, the lock, the rate-limit ledgers and the Router's and Planner's histories), one round's
working state, and the stepping of a round through the core's table, each step recorded in the run."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from kronii.common.desktop_hold import DesktopHolds
from kronii.pipeline.adapters.runs_store import RunRecord, StateVisit
from kronii.pipeline.core.budget import PluginContent
from kronii.pipeline.core.deferral import Deferral, DeferReason
from kronii.pipeline.core.intake import Batch
from kronii.pipeline.core.limits import DEFAULT_CAPTURE_LIMITS, DEFAULT_RUN_LIMITS, RateLedger, RateLimits
from kronii.pipeline.core.machine import Facts, NoTransition, Step, step
from kronii.pipeline.core.router import BaseSnapshot, PluginInfo, RouteDecision, RouterHistory, RouterLimits
from kronii.pipeline.core.states import CapturePreemption, RunState, Trigger, TriggerKind
from kronii.pipeline.core.table import Action
from kronii.pipeline.ports import Clock, RunSink
from kronii.pipeline.roles.values import Fragment, Notification, Plan, PlanHistory, Synthesis
from kronii.redaction import Level

__all__ = ["Round", "RoundAborted", "RunnerConfig", "Standing", "Stepper"]

# What a round keeps waiting for while its own work runs: more would only be coalesced away.
_MAX_WAITING_BATCHES = 16
# What seed row 3 does not backfill after a deferral: the kinds that come in bursts.
_HIGH_FREQUENCY_KINDS = frozenset({TriggerKind.TITLE_CHANGED, TriggerKind.ACTIVITY_PULSE})


@dataclass(frozen=True, slots=True)
class RunnerConfig:
    coalesce_window_ms: int = 1_500
    title_max_changes: int = 3
    run_limits: RateLimits = DEFAULT_RUN_LIMITS
    capture_limits: RateLimits = DEFAULT_CAPTURE_LIMITS
    context_budget_tokens: int = 1_200
    max_cooldown_ms: int = 3_600_000
    defer_backoff_ms: int = 60_000
    capture_ttl_ms: int = 30_000
    role_timeout_ms: int = 60_000
    plan_horizon_ms: int = 24 * 3_600_000


@dataclass
class Round:
    run_id: str
    batch: Batch
    record: RunRecord
    state: RunState = RunState.IDLE
    base: BaseSnapshot | None = None
    decision: RouteDecision | None = None
    plugins: Sequence[PluginInfo] = ()
    plugin_contents: list[PluginContent] = field(default_factory=list)
    plugin_gathered: bool = False
    admitted: bool = False
    screenshot_id: str | None = None
    capture_job: str = ""
    capture_deadline_ms: int = 0
    redacted_base: str = ""
    level: Level | None = None
    fragments: list[Fragment] = field(default_factory=list)
    synthesis: Synthesis | None = None
    plan: Plan | None = None
    notification: Notification | None = None
    defer_reason: DeferReason | None = None
    notes: list[str] = field(default_factory=list)
    retry_after_ms: int = 0

    @property
    def app(self) -> str:
        if self.base is not None and (self.base.app or self.base.wm_class):
            return self.base.app or self.base.wm_class
        trigger = self.batch.last
        return trigger.app or trigger.wm_class or trigger.plugin_app_id or "desktop"


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

    def __init__(
        self, standing: Standing, runs: RunSink, config: RunnerConfig, clock: Clock, wall: Clock
    ) -> None:
        self._standing = standing
        self._runs = runs
        self._config = config
        self._clock = clock
        self._wall = wall

    async def move(self, current: Round, moved: Step | NoTransition) -> None:
        if isinstance(moved, NoTransition):
            raise RoundAborted(f"no row: {moved.reason}")
        now = self._clock()
        wall = self._wall()  # the record's times; the ledgers measure on `now`
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
        await self.move(current, step(current.state, Trigger(kind, self._clock()), facts))

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
