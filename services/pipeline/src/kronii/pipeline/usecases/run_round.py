"""One round, state by state: Collecting (the Base snapshot, the plugins, admission), Routing,
AwaitingCapture, Redacting, Extracting and Synthesizing here; Planning and Acting in `delivery`.
Each state does its work, then steps on through the core's table."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from dataclasses import replace

from kronii.foundation.clock import Clock
from kronii.pipeline.core.budget import PluginContent, budget_context
from kronii.pipeline.core.deferral import DeferReason
from kronii.pipeline.core.intake import Batch
from kronii.pipeline.core.limits import check
from kronii.pipeline.core.machine import Facts, Step
from kronii.pipeline.core.roles.values import CostLabel, RoleContext, Synthesis
from kronii.pipeline.core.round import Round, RunnerConfig
from kronii.pipeline.core.router import BaseSnapshot, Defer, PluginFull, PluginLite, route
from kronii.pipeline.core.runs import RunRecord, StateVisit
from kronii.pipeline.core.states import RunState, Trigger, TriggerKind
from kronii.pipeline.ports import RunnerPorts
from kronii.pipeline.usecases.await_capture import CaptureWait
from kronii.pipeline.usecases.call_role import RoleCalls
from kronii.pipeline.usecases.deliver_round import Delivery
from kronii.pipeline.usecases.round_state import RoundAborted, Standing, Stepper
from kronii.redaction import WITHHELD_TEXT, Level, RedactionContext

__all__ = ["Rounds", "base_text"]

log = logging.getLogger(__name__)

_LEVEL_ORDER = {Level.GREEN: 0, Level.AMBER: 1, Level.RED: 2}


def _focused_on(base: BaseSnapshot, trigger: Trigger) -> BaseSnapshot:
    """The snapshot with the trigger's focus (app, window class, title, window) over it. The snapshot's title is
    kept only when the trigger names the same window; its process and start time also when it names none."""
    same_window = base.window_id == trigger.window_id and trigger.window_id != 0
    keeps_window = same_window or not trigger.window_id
    return replace(
        base,
        app=trigger.app or base.app,
        wm_class=trigger.wm_class or base.wm_class,
        title=trigger.title or (base.title if same_window else ""),
        window_id=trigger.window_id or base.window_id,
        pid=base.pid if keeps_window else 0,
        app_start_time_ms=base.app_start_time_ms if keeps_window else 0,
    )


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


class Rounds:
    def __init__(self, standing: Standing, ports: RunnerPorts, config: RunnerConfig, clock: Clock) -> None:
        self._standing = standing
        self._ports = ports
        self._config = config
        self._clock = clock
        self._stepper = Stepper(standing, ports.runs, config, clock)
        self._role_calls = RoleCalls(standing, ports.backend, config)
        self._capture = CaptureWait(standing, self._stepper, ports.capture, config, clock)
        self._delivery = Delivery(standing, self._stepper, self._role_calls, ports, config, clock)

    @property
    def delivery(self) -> Delivery:
        return self._delivery

    async def run(self, batch: Batch, first: Step) -> RunRecord:
        now = self._clock.wall_ms()  # what the run records: the wall clock
        run_id = uuid.uuid4().hex
        summary = f"{batch.kind.value} x{batch.count}" + (" (high priority)" if batch.high_priority else "")
        record = RunRecord(run_id=run_id, created_at=now / 1000, trigger_summary=summary)
        current = Round(run_id, batch, record, state=first.source)
        current.record = replace(record, states=(StateVisit(first.source.value, now),))
        standing = self._standing
        standing.current = current
        standing.runs_started += 1
        standing.deferral = None
        while not standing.preempt.empty():
            standing.preempt.get_nowait()
        try:
            await self._stepper.move(current, first)
            await self._drive(current)
        except RoundAborted as aborted:
            current.notes.append(str(aborted))
            log.warning("run %s stopped in %s: %s", run_id, current.state.value, aborted)
        except Exception as error:
            current.notes.append(f"failed: {type(error).__name__}")
            log.exception("run %s failed in %s", run_id, current.state.value)
        finally:
            standing.current = None
        return await self._delivery.finish(current)

    async def _drive(self, current: Round) -> None:
        while True:
            state = current.state
            if state is RunState.COLLECTING:
                await self._collect(current)
            elif state is RunState.ROUTING:
                await self._route(current)
            elif state is RunState.AWAITING_CAPTURE:
                await self._capture.await_outcome(current)
            elif state is RunState.REDACTING:
                await self._redact(current)
            elif state is RunState.EXTRACTING:
                await self._extract(current)
            elif state is RunState.SYNTHESIZING:
                await self._synthesize(current)
            elif state is RunState.PLANNING:
                await self._delivery.plan(current)
            elif state is RunState.ACTING:
                await self._delivery.notify(current)
            else:
                return  # Cooling or Deferred: the round is over

    async def _base(self, batch: Batch) -> BaseSnapshot:
        trigger = batch.last
        snapshot = await self._ports.snapshots.latest()
        base = snapshot or BaseSnapshot(at_ms=trigger.at_ms)
        if trigger.window_id or trigger.title or trigger.app:
            # The trigger is newer than any snapshot: its focus is what the round is about.
            base = _focused_on(base, trigger)
        if trigger.kind is TriggerKind.STATE_CHANGED and trigger.to_state:
            base = replace(base, activity_state=trigger.to_state)
        return replace(base, locked=base.locked or self._standing.locked)

    async def _collect(self, current: Round) -> None:
        if current.base is None:
            current.base = await self._base(current.batch)
            current.plugins = await self._ports.plugins.infos()
        elif current.decision is not None and not current.plugin_gathered:
            await self._pull_plugins(current)
        allowed = current.admitted or await self._allowed(current)
        await self._stepper.internal(current, Facts(router_fields_ready=True, routing_allowed=allowed))
        if current.state is RunState.DEFERRED:
            current.defer_reason = DeferReason.RATE_LIMITED
            self._delivery.defer(current, DeferReason.RATE_LIMITED)

    async def _allowed(self, current: Round) -> bool:
        now = self._clock.monotonic_ms()
        answer = await self._ports.scheduler.admit(current.app, current.batch.last)
        self._standing.scheduler_answered = answer is not None
        if answer is not None:
            if not answer.allowed:
                current.notes.append(f"scheduler refused: {answer.reason}")
                current.retry_after_ms = answer.retry_after_ms
            return answer.allowed
        verdict = check(self._standing.run_ledger, current.app, now, self._config.run_limits)
        if not verdict.allowed:
            current.notes.append(f"rate limited: {verdict.reason}")
            current.retry_after_ms = verdict.retry_after_ms
        return verdict.allowed

    async def _pull_plugins(self, current: Round) -> None:
        decision = current.decision
        assert decision is not None
        policy = decision.policy
        apps = [a for a in getattr(policy, "apps", ()) if a != "screencapture"]
        if apps and isinstance(policy, PluginLite | PluginFull):
            contents = await self._ports.plugins.pull(apps, isinstance(policy, PluginFull), current.run_id)
            current.plugin_contents.extend(contents)
        current.plugin_gathered = True
        current.record = replace(current.record, plugins_used=tuple(apps))

    async def _route(self, current: Round) -> None:
        now = self._clock.monotonic_ms()
        assert current.base is not None
        standing = self._standing
        base = replace(current.base, locked=current.base.locked or standing.locked)
        decision = route(current.batch, base, current.plugins, standing.router_history, now)
        if current.decision is None:
            standing.router_history = standing.router_history.after(
                current.batch, decision, now, standing.router_limits
            )
        current.decision = decision
        capture_ok = check(standing.capture_ledger, current.app, now, self._config.capture_limits).allowed
        facts = Facts(
            route=decision.kind,
            needs_screenshot=decision.needs_screenshot,
            capture_allowed=capture_ok,
            plugin_context_gathered=current.plugin_gathered,
        )
        current.record = replace(current.record, route=f"{decision.kind.value}/{decision.family.value}")
        await self._stepper.internal(current, facts)
        if current.state is RunState.DEFERRED:
            policy = decision.policy
            reason = policy.reason if isinstance(policy, Defer) else DeferReason.LOW_VALUE
            current.defer_reason = reason
            current.notes.append(f"deferred: {decision.reason}")
            self._delivery.defer(current, reason)
        elif current.state is RunState.AWAITING_CAPTURE:
            await self._capture.request(current)
        elif current.state is RunState.COLLECTING and not capture_ok and decision.needs_screenshot:
            current.notes.append("capture rate limited")

    async def _redact(self, current: Round) -> None:
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
        await self._stepper.internal(current, Facts(risk=level))
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
            self._delivery.defer(current, DeferReason.RISK_RED)

    async def _extract(self, current: Round) -> None:
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
        context = RoleContext(current.batch.last.kind, budget, self._clock.monotonic_ms(), window)
        extract = self._ports.backend.extract(context, current.decision.family)
        called = await self._role_calls.call(current, extract)
        current.fragments = list(called.value) if called is not None else []
        await self._stepper.internal(current, Facts(extractors_settled=True))

    async def _synthesize(self, current: Round) -> None:
        called = await self._role_calls.call(current, self._ports.backend.synthesize(current.fragments))
        current.synthesis = (
            called.value
            if called is not None
            else Synthesis((), tuple(current.fragments), (), "", CostLabel.LOW)
        )
        await self._stepper.internal(current, Facts())
