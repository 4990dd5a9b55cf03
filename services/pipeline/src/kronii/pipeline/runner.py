"""The run loop: drives each round through the core's orchestration table, row for row.

`Runner` owns the machine's state between rounds (Idle, Cooling, Deferred), the intake, the
rate-limit ledgers and the Router's and Planner's histories; it does I/O only through the ports
below, so `kronii replay` and the tests run it with in-process parts and the service with the
networked ones. Time comes from `clock` (epoch milliseconds), never from the system directly.

It is driven by two calls: `submit(trigger)` for every trigger as it arrives (never waits on a
round), and `advance()`, which releases due batches and runs their rounds to the end. A lock that
arrives while a round runs is seen at the round's next Routing; a high-priority trigger while the
round waits for a capture preempts it (additional guard 1)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from kronii.pipeline.adapters.llm import CallRecord as LlmCallRecord
from kronii.pipeline.adapters.runs_store import RunRecord, StateVisit
from kronii.pipeline.core.budget import PluginContent, budget_context
from kronii.pipeline.core.deferral import Deferral, DeferReason, defer, deferral_over
from kronii.pipeline.core.intake import Batch, Intake
from kronii.pipeline.core.limits import (
    DEFAULT_CAPTURE_LIMITS,
    DEFAULT_RUN_LIMITS,
    RateLedger,
    RateLimits,
    check,
)
from kronii.pipeline.core.machine import Facts, NoTransition, Step, step
from kronii.pipeline.core.router import (
    BaseSnapshot,
    Defer,
    PluginFull,
    PluginInfo,
    PluginLite,
    RouteDecision,
    RouterHistory,
    RouterLimits,
    route,
)
from kronii.pipeline.core.states import (
    EXTERNAL_TRIGGERS,
    ROUND_TRIGGERS,
    CapturePreemption,
    CaptureStatus,
    Priority,
    RunState,
    Trigger,
    TriggerKind,
)
from kronii.pipeline.core.table import Action
from kronii.pipeline.roles.backend import RoleBackend
from kronii.pipeline.roles.model import (
    Called,
    CallRecord,
    CostLabel,
    Fragment,
    Notification,
    Plan,
    PlanHistory,
    RoleContext,
    Synthesis,
)
from kronii.redaction import WITHHELD_TEXT, Level, RedactionContext, RedactionEngine

__all__ = [
    "Admit",
    "CaptureOutcome",
    "CapturePort",
    "Clock",
    "InMemoryRuns",
    "NoCapture",
    "NotifierPort",
    "PluginPort",
    "Runner",
    "RunnerConfig",
    "RunnerPorts",
    "SchedulerPort",
    "SnapshotPort",
    "base_text",
]

log = logging.getLogger(__name__)

Clock = Callable[[], int]
_LEVEL_ORDER = {Level.GREEN: 0, Level.AMBER: 1, Level.RED: 2}
# What a round keeps waiting for while its own work runs: more would only be coalesced away.
_MAX_WAITING_BATCHES = 16
# What seed row 3 does not backfill after a deferral: the kinds that come in bursts.
_HIGH_FREQUENCY_KINDS = frozenset({TriggerKind.TITLE_CHANGED, TriggerKind.ACTIVITY_PULSE})


# ---- ports -------------------------------------------------------------------------------------


class SnapshotPort(Protocol):
    async def latest(self) -> BaseSnapshot | None: ...


class PluginPort(Protocol):
    async def infos(self) -> Sequence[PluginInfo]: ...

    async def pull(self, app_ids: Sequence[str], full: bool, run_id: str) -> Sequence[PluginContent]: ...


@dataclass(frozen=True, slots=True)
class CaptureOutcome:
    status: CaptureStatus
    screenshot_id: str = ""
    reason: str = ""


class CapturePort(Protocol):
    async def request(self, base: BaseSnapshot, priority: Priority, ttl_ms: int) -> str: ...

    async def outcome(self, job_id: str) -> CaptureOutcome: ...

    async def cancel(self, job_id: str) -> None: ...


class NotifierPort(Protocol):
    async def muted(self, source_key: str) -> str | None: ...

    async def notify(self, run_id: str, notification: Notification, source_key: str) -> str: ...


@dataclass(frozen=True, slots=True)
class Admit:
    allowed: bool
    reason: str = ""
    # When the refusing rules will have passed (the scheduler's retry_after_ms); 0 when unknown.
    retry_after_ms: int = 0


class SchedulerPort(Protocol):
    async def admit(self, app: str, trigger: Trigger) -> Admit | None:
        """None when the scheduler does not answer: the core's own limits decide."""
        ...

    async def plan(self, run_id: str, app: str, plan: Plan, now_ms: int) -> None: ...


class RunSink(Protocol):
    async def save(self, record: RunRecord) -> None: ...


class AuditPort(Protocol):
    async def __call__(
        self, *, actor: str, action: str, subject: str = "", outcome: str = "", **detail: Any
    ) -> None: ...


class NoCapture:
    """No ScreenCapture service: every request fails at once, and the round degrades (seed row 9)."""

    async def request(self, base: BaseSnapshot, priority: Priority, ttl_ms: int) -> str:
        return "none"

    async def outcome(self, job_id: str) -> CaptureOutcome:
        return CaptureOutcome(CaptureStatus.FAILED, reason="no capture service")

    async def cancel(self, job_id: str) -> None:
        return None


class InMemoryRuns:
    """A run store for replay and tests: the latest record of each run, in order of creation."""

    def __init__(self) -> None:
        self.records: dict[str, RunRecord] = {}

    async def save(self, record: RunRecord) -> None:
        self.records[record.run_id] = record


async def _no_audit(*, actor: str, action: str, subject: str = "", outcome: str = "", **detail: Any) -> None:
    return None


@dataclass
class RunnerPorts:
    snapshots: SnapshotPort
    plugins: PluginPort
    backend: RoleBackend
    notifier: NotifierPort
    scheduler: SchedulerPort
    runs: RunSink
    capture: CapturePort = field(default_factory=NoCapture)
    redaction: RedactionEngine = field(default_factory=RedactionEngine)
    audit: AuditPort = _no_audit


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


# ---- one round ---------------------------------------------------------------------------------


def base_text(base: BaseSnapshot) -> str:
    """The Base snapshot as the text the redaction engine and the extractors read."""
    lines = [f"activity: {base.activity_state}"]
    if base.app or base.wm_class:
        lines.append(f"app: {base.app or base.wm_class} ({base.wm_class})")
    if base.title:
        lines.append(f"window title: {base.title}")
    return "\n".join(lines)


def _worst(levels: Sequence[Level]) -> Level:
    return max(levels, key=_LEVEL_ORDER.__getitem__, default=Level.GREEN)


def _llm_record(call: CallRecord, detail: LlmCallRecord | None) -> LlmCallRecord:
    if detail is not None:
        return detail
    return LlmCallRecord(
        role=call.role.value,
        backend=call.backend,
        input_tokens=call.input_tokens,
        output_tokens=call.output_tokens,
        latency_ms=call.latency_ms,
        attempts=1,
        tokens_estimated=True,
    )


@dataclass
class _Round:
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


class RoundAborted(Exception):
    """The table had no row for what happened: the round ends where it is (logged, recorded)."""


class Runner:
    def __init__(self, ports: RunnerPorts, clock: Clock, config: RunnerConfig | None = None) -> None:
        self._ports = ports
        self._clock = clock
        self._config = config or RunnerConfig()
        self._intake = Intake(self._config.coalesce_window_ms, self._config.title_max_changes)
        self._state = RunState.IDLE
        self._locked = False
        self._deferral: Deferral | None = None
        self._cooling_until_ms = 0
        self._run_ledger = RateLedger()
        self._capture_ledger = RateLedger()
        self._router_history = RouterHistory()
        self._plan_history = PlanHistory(0)
        self._waiting: deque[Batch] = deque(maxlen=_MAX_WAITING_BATCHES)
        self._preempt: asyncio.Queue[Trigger] = asyncio.Queue()
        self._current: _Round | None = None
        self._scheduler_answered: bool | None = None
        self._router_limits = RouterLimits()
        self._last_preemption = CapturePreemption.CANCEL
        self.runs_started = 0
        # What each of the latest runs noted on its way (capture outcome, refusals, deferrals).
        self.recent_notes: deque[tuple[str, tuple[str, ...]]] = deque(maxlen=20)
        self.model_calls = 0

    # ---- what the service shows ----------------------------------------------------------------

    @property
    def state(self) -> RunState:
        return self._current.state if self._current is not None else self._state

    @property
    def locked(self) -> bool:
        return self._locked

    @property
    def dropped_title_churn(self) -> int:
        return self._intake.dropped_title_churn

    @property
    def scheduler_answered(self) -> bool | None:
        """None before the first admission; then whether the scheduler answered the last one."""
        return self._scheduler_answered

    def status(self) -> dict[str, Any]:
        return {
            "state": self.state.value,
            "locked": self._locked,
            "cooling_until_ms": self._cooling_until_ms or None,
            "deferred": None
            if self._deferral is None
            else {"reason": self._deferral.reason.value, "resume_at_ms": self._deferral.resume_at_ms},
            "pending_batches": self._intake.pending + len(self._waiting),
            "dropped_title_churn": self._intake.dropped_title_churn,
            "runs_started": self.runs_started,
            "run_id": self._current.run_id if self._current is not None else None,
            "recent_notes": {run_id: list(notes) for run_id, notes in self.recent_notes},
        }

    # ---- input ---------------------------------------------------------------------------------

    async def submit(self, trigger: Trigger) -> str:
        """Take one external trigger; returns what became of it (never waits on a round)."""
        if trigger.kind not in EXTERNAL_TRIGGERS:
            raise ValueError(f"{trigger.kind} is the pipeline's own signal, not an external trigger")
        if trigger.kind is TriggerKind.LOCK_START:
            self._locked = True
            if self._current is None:
                await self._lock_while_idle(trigger)
            return "locked"
        if trigger.kind is TriggerKind.LOCK_END:
            self._locked = False
            if self._current is None and self._state is RunState.DEFERRED:
                self._waiting.clear()  # seed row 3: do not backfill what came in while deferred
                self._waiting.append(Batch(trigger, trigger, 1, trigger.at_ms, high_priority=True))
            return "unlocked"
        current = self._current
        if current is not None and current.state is RunState.AWAITING_CAPTURE and trigger.high_priority:
            self._preempt.put_nowait(trigger)
        return self._intake.offer(trigger).value

    async def _lock_while_idle(self, trigger: Trigger) -> None:
        if self._state is not RunState.IDLE:
            return
        outcome = step(RunState.IDLE, trigger, Facts(locked=True))
        if isinstance(outcome, Step):
            self._state = outcome.target
            self._deferral = defer(DeferReason.LOCKED, trigger.at_ms)
            await self._ports.audit(
                actor="pipeline", action="pipeline.defer", subject="lock", outcome="locked"
            )

    # ---- the loop ------------------------------------------------------------------------------

    async def advance(self) -> list[RunRecord]:
        """Release due batches and run their rounds; returns the records of the rounds that ended."""
        now = self._clock()
        self._end_cooldown_if_due(now)
        finished: list[RunRecord] = []
        resumed = self._resume_if_due(now)
        if resumed is not None:
            self._waiting.append(resumed)
        self._waiting.extend(self._intake.release(now))
        while self._waiting:
            batch = self._waiting.popleft()
            record = await self._take(batch)
            if record is not None:
                finished.append(record)
        return finished

    def _end_cooldown_if_due(self, now: int) -> None:
        # The cooldown's own Tick (seed row 17, "reaches min interval"): the core's safety net for
        # the cooldown it set itself, so the round loop does not depend on the scheduler being up.
        if self._state is RunState.COOLING and now >= self._cooling_until_ms:
            tick = Trigger(TriggerKind.TICK, now)
            outcome = step(RunState.COOLING, tick, Facts(cooldown_reached=True))
            if isinstance(outcome, Step):
                self._state = outcome.target

    def _resume_if_due(self, now: int) -> Batch | None:
        if self._state is not RunState.DEFERRED or self._deferral is None or self._waiting:
            return None
        if not deferral_over(self._deferral, now, self._locked):
            return None
        tick = Trigger(TriggerKind.TICK, now)
        return Batch(tick, tick, 1, now)

    async def _take(self, batch: Batch) -> RunRecord | None:
        trigger = batch.last
        now = self._clock()
        if self._state is RunState.COOLING:
            facts = Facts(cooldown_reached=now >= self._cooling_until_ms)
            outcome = step(RunState.COOLING, trigger, facts)
            if isinstance(outcome, NoTransition):
                return None
            self._state = outcome.target
        if self._state is RunState.DEFERRED:
            over = self._deferral is None or deferral_over(self._deferral, now, self._locked)
            outcome = step(RunState.DEFERRED, trigger, Facts(deferral_over=over, locked=self._locked))
            if isinstance(outcome, NoTransition):
                return None
            return await self._run(batch, outcome)
        if self._state is not RunState.IDLE or trigger.kind not in ROUND_TRIGGERS:
            return None
        outcome = step(RunState.IDLE, trigger, Facts(locked=self._locked))
        if isinstance(outcome, NoTransition):
            return None
        return await self._run(batch, outcome)

    # ---- a round -------------------------------------------------------------------------------

    async def _run(self, batch: Batch, first: Step) -> RunRecord:
        now = self._clock()
        run_id = uuid.uuid4().hex
        summary = f"{batch.kind.value} x{batch.count}" + (" (high priority)" if batch.high_priority else "")
        record = RunRecord(run_id=run_id, created_at=now / 1000, trigger_summary=summary)
        current = _Round(run_id, batch, record, state=first.source)
        current.record = replace(record, states=(StateVisit(first.source.value, now),))
        self._current = current
        self.runs_started += 1
        self._deferral = None
        while not self._preempt.empty():
            self._preempt.get_nowait()
        try:
            await self._move(current, first)
            await self._drive(current)
        except RoundAborted as aborted:
            current.notes.append(str(aborted))
            log.warning("run %s stopped in %s: %s", run_id, current.state.value, aborted)
        except Exception as error:
            current.notes.append(f"failed: {type(error).__name__}")
            log.exception("run %s failed in %s", run_id, current.state.value)
        finally:
            self._current = None
        return await self._finish(current)

    async def _move(self, current: _Round, moved: Step | NoTransition) -> None:
        if isinstance(moved, NoTransition):
            raise RoundAborted(f"no row: {moved.reason}")
        now = self._clock()
        visits = list(current.record.states)
        if visits:
            visits[-1] = replace(visits[-1], left_at_ms=now)
        visits.append(StateVisit(moved.target.value, now))
        current.record = replace(current.record, states=tuple(visits))
        current.state = moved.target
        await self._act(current, moved.actions, now)
        with contextlib.suppress(Exception):
            await self._ports.runs.save(current.record)

    async def _internal(
        self, current: _Round, facts: Facts, kind: TriggerKind = TriggerKind.INTERNAL
    ) -> None:
        await self._move(current, step(current.state, Trigger(kind, self._clock()), facts))

    async def _act(self, current: _Round, actions: Sequence[Action], now: int) -> None:
        """Book-keeping actions; the work of each state is done in `_drive` before it steps on."""
        for action in actions:
            if action is Action.RECORD_RUN and not current.admitted:
                self._run_ledger = self._run_ledger.record(current.app, now, self._config.run_limits)
                current.admitted = True
            elif action is Action.RECORD_CAPTURE:
                self._capture_ledger = self._capture_ledger.record(
                    current.app, now, self._config.capture_limits
                )
            elif action is Action.DROP_HIGH_FREQUENCY_BACKLOG:
                kept = [b for b in self._waiting if b.kind not in _HIGH_FREQUENCY_KINDS]
                self._waiting.clear()
                self._waiting.extend(kept)

    async def _drive(self, current: _Round) -> None:
        while True:
            state = current.state
            if state is RunState.COLLECTING:
                await self._collect(current)
            elif state is RunState.ROUTING:
                await self._route(current)
            elif state is RunState.AWAITING_CAPTURE:
                await self._await_capture(current)
            elif state is RunState.REDACTING:
                await self._redact(current)
            elif state is RunState.EXTRACTING:
                await self._extract(current)
            elif state is RunState.SYNTHESIZING:
                await self._synthesize(current)
            elif state is RunState.PLANNING:
                await self._plan(current)
            elif state is RunState.ACTING:
                await self._notify(current)
            else:
                return  # Cooling or Deferred: the round is over

    async def _base(self, batch: Batch) -> BaseSnapshot:
        trigger = batch.last
        snapshot = await self._ports.snapshots.latest()
        base = snapshot or BaseSnapshot(at_ms=trigger.at_ms)
        if trigger.window_id or trigger.title or trigger.app:
            # The trigger is newer than any snapshot: its focus is what the round is about.
            same_window = base.window_id == trigger.window_id and trigger.window_id != 0
            base = replace(
                base,
                app=trigger.app or base.app,
                wm_class=trigger.wm_class or base.wm_class,
                title=trigger.title or (base.title if same_window else ""),
                window_id=trigger.window_id or base.window_id,
                pid=base.pid if same_window or not trigger.window_id else 0,
                app_start_time_ms=base.app_start_time_ms if same_window or not trigger.window_id else 0,
            )
        if trigger.kind is TriggerKind.STATE_CHANGED and trigger.to_state:
            base = replace(base, activity_state=trigger.to_state)
        return replace(base, locked=base.locked or self._locked)

    async def _collect(self, current: _Round) -> None:
        if current.base is None:
            current.base = await self._base(current.batch)
            current.plugins = await self._ports.plugins.infos()
        elif current.decision is not None and not current.plugin_gathered:
            await self._pull_plugins(current)
        allowed = current.admitted or await self._allowed(current)
        await self._internal(current, Facts(router_fields_ready=True, routing_allowed=allowed))
        if current.state is RunState.DEFERRED:
            current.defer_reason = DeferReason.RATE_LIMITED
            self._defer(current, DeferReason.RATE_LIMITED)

    async def _allowed(self, current: _Round) -> bool:
        now = self._clock()
        answer = await self._ports.scheduler.admit(current.app, current.batch.last)
        self._scheduler_answered = answer is not None
        if answer is not None:
            if not answer.allowed:
                current.notes.append(f"scheduler refused: {answer.reason}")
                current.retry_after_ms = answer.retry_after_ms
            return answer.allowed
        verdict = check(self._run_ledger, current.app, now, self._config.run_limits)
        if not verdict.allowed:
            current.notes.append(f"rate limited: {verdict.reason}")
            current.retry_after_ms = verdict.retry_after_ms
        return verdict.allowed

    async def _pull_plugins(self, current: _Round) -> None:
        decision = current.decision
        assert decision is not None
        policy = decision.policy
        apps = [a for a in getattr(policy, "apps", ()) if a != "screencapture"]
        if apps and isinstance(policy, PluginLite | PluginFull):
            contents = await self._ports.plugins.pull(apps, isinstance(policy, PluginFull), current.run_id)
            current.plugin_contents.extend(contents)
        current.plugin_gathered = True
        current.record = replace(current.record, plugins_used=tuple(apps))

    async def _route(self, current: _Round) -> None:
        now = self._clock()
        assert current.base is not None
        base = replace(current.base, locked=current.base.locked or self._locked)
        decision = route(current.batch, base, current.plugins, self._router_history, now)
        if current.decision is None:
            self._router_history = self._router_history.after(
                current.batch, decision, now, self._router_limits
            )
        current.decision = decision
        capture_ok = check(self._capture_ledger, current.app, now, self._config.capture_limits).allowed
        facts = Facts(
            route=decision.kind,
            needs_screenshot=decision.needs_screenshot,
            capture_allowed=capture_ok,
            plugin_context_gathered=current.plugin_gathered,
        )
        current.record = replace(current.record, route=f"{decision.kind.value}/{decision.family.value}")
        await self._internal(current, facts)
        if current.state is RunState.DEFERRED:
            policy = decision.policy
            reason = policy.reason if isinstance(policy, Defer) else DeferReason.LOW_VALUE
            current.defer_reason = reason
            current.notes.append(f"deferred: {decision.reason}")
            self._defer(current, reason)
        elif current.state is RunState.AWAITING_CAPTURE:
            await self._request_capture(current)
        elif current.state is RunState.COLLECTING and not capture_ok and decision.needs_screenshot:
            current.notes.append("capture rate limited")

    async def _request_capture(self, current: _Round) -> None:
        assert current.base is not None
        priority = Priority.HIGH if current.batch.high_priority else Priority.NORMAL
        try:
            current.capture_job = await self._ports.capture.request(
                current.base, priority, self._config.capture_ttl_ms
            )
        except Exception as error:
            current.notes.append(f"capture request failed: {type(error).__name__}")
            current.capture_job = ""
        current.capture_deadline_ms = self._clock() + self._config.capture_ttl_ms
        current.record = replace(current.record, plugins_used=(*current.record.plugins_used, "screencapture"))

    async def _await_capture(self, current: _Round) -> None:
        job = current.capture_job
        outcome_task: asyncio.Task[CaptureOutcome] | None = None
        if job:
            outcome_task = asyncio.ensure_future(self._ports.capture.outcome(job))
        try:
            while current.state is RunState.AWAITING_CAPTURE:
                remaining = max(0.0, (current.capture_deadline_ms - self._clock()) / 1000)
                preempt_task = asyncio.ensure_future(self._preempt.get())
                waiting: set[asyncio.Future[Any]] = {preempt_task}
                if outcome_task is not None:
                    waiting.add(outcome_task)
                done, _ = await asyncio.wait(waiting, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
                if preempt_task not in done:
                    preempt_task.cancel()
                if outcome_task is not None and outcome_task in done:
                    await self._capture_done(current, outcome_task)
                elif preempt_task in done:
                    await self._preempted(current, preempt_task.result())
                    if _state(current) is not RunState.AWAITING_CAPTURE:
                        return
                elif not done:
                    current.notes.append("capture timed out")
                    await self._internal(current, Facts(), TriggerKind.TIMEOUT)
                else:  # no job at all: the request itself failed
                    await self._capture_failed(current, "capture request failed")
        finally:
            if outcome_task is not None and not outcome_task.done():
                outcome_task.cancel()

    async def _capture_failed(self, current: _Round, reason: str) -> None:
        trigger = Trigger(TriggerKind.CAPTURE_STATUS, self._clock(), capture_status=CaptureStatus.FAILED)
        current.notes.append(f"capture failed: {reason}")
        await self._move(current, step(current.state, trigger, Facts()))

    async def _capture_done(self, current: _Round, task: asyncio.Task[CaptureOutcome]) -> None:
        try:
            outcome = task.result()
        except Exception as error:
            await self._capture_failed(current, type(error).__name__)
            return
        now = self._clock()
        trigger = Trigger(
            TriggerKind.CAPTURE_STATUS, now, capture_status=outcome.status, capture_job_id=current.capture_job
        )
        within = now <= current.capture_deadline_ms
        moved = step(current.state, trigger, Facts(capture_within_ttl=within))
        if isinstance(moved, Step) and Action.ATTACH_SCREENSHOT_ID in moved.actions:
            current.screenshot_id = outcome.screenshot_id or None
            current.notes.append("capture persisted")
        elif isinstance(moved, Step):
            current.notes.append(f"capture {outcome.status.value}: degraded to the other context")
        await self._move(current, moved)

    async def _preempted(self, current: _Round, trigger: Trigger) -> None:
        policy = self._last_preemption
        moved = step(current.state, trigger, Facts(capture_preemption=policy))
        if isinstance(moved, NoTransition):
            return
        if Action.CANCEL_CAPTURE in moved.actions and current.capture_job:
            with contextlib.suppress(Exception):
                await self._ports.capture.cancel(current.capture_job)
            current.notes.append("capture cancelled by a high-priority trigger")
            # Start over from the new focus: a fresh batch, snapshot and route.
            current.batch = Batch(trigger, trigger, 1, trigger.at_ms, high_priority=True)
            current.base = None
            current.decision = None
            current.plugin_gathered = False
            current.plugin_contents.clear()
        elif Action.DOWNGRADE_CAPTURE in moved.actions:
            current.notes.append("capture downgraded by a high-priority trigger")
        await self._move(current, moved)

    async def _redact(self, current: _Round) -> None:
        assert current.base is not None
        context = RedactionContext.random()
        engine = self._ports.redaction
        results = [engine.redact(base_text(current.base), context=context, app=current.app)]
        cleaned: list[PluginContent] = []
        for content in current.plugin_contents:
            result = engine.redact(content.text, context=context, app=content.app_id)
            results.append(result)
            cleaned.append(replace(content, text=result.text if result.may_leave else WITHHELD_TEXT))
        level = _worst([r.level for r in results])
        current.level = level
        current.redacted_base = results[0].text if results[0].may_leave else WITHHELD_TEXT
        current.plugin_contents = cleaned
        current.record = replace(current.record, redaction_level=level.value)
        await self._internal(current, Facts(risk=level))
        findings = sorted({f.type for r in results for f in r.findings})
        await self._ports.audit(
            actor="pipeline",
            action="pipeline.redaction",
            subject=current.run_id,
            outcome=level.value,
            findings=[str(f) for f in findings],
        )
        if current.state is RunState.DEFERRED:
            current.defer_reason = DeferReason.RISK_RED
            current.notes.append("deferred: context graded red")
            self._defer(current, DeferReason.RISK_RED)

    async def _call(self, current: _Round, call: Any) -> Called[Any] | None:
        """One role call within the role timeout; its record goes into the run either way."""
        backend = self._ports.backend
        try:
            called: Called[Any] = await asyncio.wait_for(call, self._config.role_timeout_ms / 1000)
        except Exception as error:
            detail = getattr(error, "call", None)
            if isinstance(detail, LlmCallRecord):
                self._add_call(current, detail)
            current.notes.append(f"role call failed: {type(error).__name__}")
            return None
        detail = getattr(backend, "last_call", None)
        record = _llm_record(called.call, detail if isinstance(detail, LlmCallRecord) else None)
        if record.fallback:
            current.notes.append(f"{record.role}: rules' answer kept ({record.fallback[:200]})")
        self._add_call(current, record)
        return called

    def _add_call(self, current: _Round, call: LlmCallRecord) -> None:
        self.model_calls += 1
        current.record = replace(current.record, model_calls=(*current.record.model_calls, call))

    async def _extract(self, current: _Round) -> None:
        assert current.decision is not None
        budget = budget_context(
            current.redacted_base,
            current.plugin_contents,
            self._config.context_budget_tokens,
            screenshot_id=current.screenshot_id,
        )
        window = current.decision.window
        if window is not None and current.level is not Level.GREEN:
            # The window context was read from the raw title: rebuild it from the redacted one.
            from kronii.pipeline.core.window_context import extract_window_context

            assert current.base is not None
            redacted_title = self._ports.redaction.redact(current.base.title).text
            window = extract_window_context(current.base.wm_class, redacted_title)
        context = RoleContext(current.batch.last.kind, budget, self._clock(), window)
        called = await self._call(current, self._ports.backend.extract(context, current.decision.family))
        current.fragments = list(called.value) if called is not None else []
        await self._internal(current, Facts(extractors_settled=True))

    async def _synthesize(self, current: _Round) -> None:
        called = await self._call(current, self._ports.backend.synthesize(current.fragments))
        current.synthesis = (
            called.value
            if called is not None
            else Synthesis((), tuple(current.fragments), (), "", CostLabel.LOW)
        )
        await self._internal(current, Facts())

    async def _plan(self, current: _Round) -> None:
        assert current.synthesis is not None
        now = self._clock()
        history = replace(self._plan_history, now_ms=now)
        called = await self._call(current, self._ports.backend.plan(current.synthesis, history))
        plan = (
            called.value if called is not None else Plan(False, now + 600_000, 600_000, (), "planner failed")
        )
        notify = plan.notify
        top = current.synthesis.top
        if notify and top is not None:
            muted = await self._ports.notifier.muted(_source_key(top.action))
            if muted is not None:
                notify = False
                current.notes.append(f"silent: {top.action} suggestions {muted}")
        current.plan = plan
        self._last_preemption = plan.capture_preemption
        self._plan_history = history.after(current.synthesis, plan, self._config.plan_horizon_ms)
        current.record = replace(current.record, decision="notify" if notify else "silent")
        await self._internal(current, Facts(planner_notifies=notify))
        if current.state is RunState.COOLING:
            await self._cool(current)

    async def _notify(self, current: _Round) -> None:
        assert current.plan is not None and current.synthesis is not None
        called = await self._call(current, self._ports.backend.notify(current.plan, current.synthesis))
        notification = called.value if called is not None else None
        if notification is not None:
            top = current.synthesis.top
            key = _source_key(top.action if top is not None else "suggestion")
            notification_id = await self._ports.notifier.notify(current.run_id, notification, key)
            current.notification = notification
            current.record = replace(current.record, notification_id=notification_id)
        else:
            current.record = replace(current.record, decision="silent")
        await self._internal(current, Facts(output_done=True))
        await self._cool(current)

    async def _cool(self, current: _Round) -> None:
        assert current.plan is not None
        now = self._clock()
        cooldown = min(current.plan.min_cooldown_ms, self._config.max_cooldown_ms)
        self._cooling_until_ms = now + cooldown
        current.record = replace(current.record, next_wakeup_at=current.plan.next_wakeup_ms / 1000)
        self._state = RunState.COOLING
        await self._ports.scheduler.plan(current.run_id, current.app, current.plan, now)

    def _defer(self, current: _Round, reason: DeferReason) -> None:
        now = self._clock()
        backoff = self._config.defer_backoff_ms
        if reason is DeferReason.RATE_LIMITED and current.retry_after_ms > backoff:
            # A Tick before the limit passes would only open a round the limit refuses again.
            backoff = current.retry_after_ms
        self._deferral = (
            defer(reason, now) if reason is DeferReason.LOCKED else defer(reason, now, backoff_ms=backoff)
        )
        current.record = replace(current.record, decision=f"deferred:{reason.value}")
        self._state = RunState.DEFERRED

    async def _finish(self, current: _Round) -> RunRecord:
        now = self._clock()
        visits = list(current.record.states)
        if visits and current.state not in (RunState.COOLING, RunState.DEFERRED):
            visits[-1] = replace(visits[-1], left_at_ms=now)
        if current.state is RunState.COOLING:
            self._state = RunState.COOLING
        elif current.state is RunState.DEFERRED:
            self._state = RunState.DEFERRED
        else:
            # A round that stopped mid-way (an error, or no row for what happened) defers briefly.
            self._state = RunState.DEFERRED
            self._deferral = defer(DeferReason.LOW_VALUE, now, backoff_ms=self._config.defer_backoff_ms)
            if not current.record.decision:
                current.record = replace(current.record, decision="failed")
        record = replace(
            current.record, states=tuple(visits), finished_at=now / 1000, notes=tuple(current.notes)
        )
        self.recent_notes.append((record.run_id, tuple(current.notes)))
        current.record = record
        await self._ports.runs.save(record)
        await self._ports.audit(
            actor="pipeline",
            action="pipeline.run",
            subject=record.run_id,
            outcome=record.decision,
            path=[v.state for v in record.states],
            route=record.route,
            plugins=list(record.plugins_used),
            redaction=record.redaction_level,
            model_calls=len(record.model_calls),
            tokens_in=record.tokens_in,
            tokens_out=record.tokens_out,
            cost=record.cost_estimate,
            next_wakeup_at=record.next_wakeup_at,
            notes=current.notes,
        )
        log.info(
            "run %s: %s -> %s (%d model calls)",
            record.run_id,
            " > ".join(v.state for v in record.states),
            record.decision,
            len(record.model_calls),
        )
        return record


def _state(current: _Round) -> RunState:
    # Read through a call: the state changes under awaits, which type narrowing does not see.
    return current.state


def _source_key(action: str) -> str:
    """What snooze and disable act on: one kind of suggestion."""
    return f"suggestion:{action}"
