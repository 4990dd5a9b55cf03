"""How a round ends: the Planner's decision (notify or stay silent, unless the user muted that kind
of suggestion or holds the desktop), the notification, the cooldown and the plan handed to the
scheduler, or a deferral; then the run's record, saved and audited."""

from __future__ import annotations

import logging
from dataclasses import replace

from kronii.foundation.clock import Clock, on_the_wall_ms
from kronii.pipeline.core.deferral import DeferReason, defer
from kronii.pipeline.core.machine import Facts
from kronii.pipeline.core.roles.values import Plan
from kronii.pipeline.core.round import Round, RunnerConfig
from kronii.pipeline.core.runs import RunRecord
from kronii.pipeline.core.states import RunState
from kronii.pipeline.ports import RunnerPorts
from kronii.pipeline.usecases.call_role import RoleCalls
from kronii.pipeline.usecases.round_state import Standing, Stepper

__all__ = ["Delivery", "source_key"]

log = logging.getLogger(__name__)


def source_key(action: str) -> str:
    """What snooze and disable act on: one kind of suggestion."""
    return f"suggestion:{action}"


class Delivery:
    def __init__(
        self,
        standing: Standing,
        stepper: Stepper,
        role_calls: RoleCalls,
        ports: RunnerPorts,
        config: RunnerConfig,
        clock: Clock,
    ) -> None:
        self._standing = standing
        self._stepper = stepper
        self._role_calls = role_calls
        self._ports = ports
        self._config = config
        self._clock = clock

    async def plan(self, current: Round) -> None:
        assert current.synthesis is not None
        now = self._clock.monotonic_ms()
        history = replace(self._standing.plan_history, now_ms=now)
        called = await self._role_calls.call(current, self._ports.backend.plan(current.synthesis, history))
        plan = (
            called.value if called is not None else Plan(False, now + 600_000, 600_000, (), "planner failed")
        )
        notify = plan.notify
        top = current.synthesis.top
        if notify and top is not None:
            muted = await self._ports.notifier.muted(source_key(top.action))
            if muted is not None:
                notify = False
                current.notes.append(f"silent: {top.action} suggestions {muted}")
        held = notify and self._desktop_held(current)
        notify = notify and not held
        current.plan = plan
        self._standing.last_preemption = plan.capture_preemption
        # A suggestion held back was not surfaced: it may be once the person hands the desktop back.
        remembered = replace(plan, notify=False) if held else plan
        self._standing.plan_history = history.after(
            current.synthesis, remembered, self._config.plan_horizon_ms
        )
        current.record = replace(current.record, decision="notify" if notify else "silent")
        await self._stepper.internal(current, Facts(planner_notifies=notify))
        if current.state is RunState.COOLING:
            await self._cool(current)

    async def notify(self, current: Round) -> None:
        assert current.plan is not None and current.synthesis is not None
        called = await self._role_calls.call(
            current, self._ports.backend.notify(current.plan, current.synthesis)
        )
        notification = called.value if called is not None else None
        # The person may have taken the desktop back while the Notifier wrote.
        if notification is not None and not self._desktop_held(current):
            top = current.synthesis.top
            key = source_key(top.action if top is not None else "suggestion")
            notification_id = await self._ports.notifier.notify(current.run_id, notification, key)
            current.notification = notification
            current.record = replace(current.record, notification_id=notification_id)
        else:
            current.record = replace(current.record, decision="silent")
        await self._stepper.internal(current, Facts(output_done=True))
        await self._cool(current)

    def _desktop_held(self, current: Round) -> bool:
        """While the person holds the desktop (the input broker said so) the round thinks but starts
        no action: nothing is sent, and the run notes why."""
        # The broker says until when on the wall clock.
        hold = self._standing.desktop_holds.holding(self._clock.wall_ms() / 1000)
        if hold is None:
            return False
        current.notes.append(f"silent: {hold.describe()}")
        return True

    async def _cool(self, current: Round) -> None:
        assert current.plan is not None
        now = self._clock.monotonic_ms()
        cooldown = min(current.plan.min_cooldown_ms, self._config.max_cooldown_ms)
        self._standing.cooling_until_ms = now + cooldown
        wakeup = on_the_wall_ms(self._clock, current.plan.next_wakeup_ms)
        current.record = replace(current.record, next_wakeup_at=wakeup / 1000)
        self._standing.state = RunState.COOLING
        await self._ports.scheduler.plan(current.run_id, current.app, current.plan, now)

    def defer(self, current: Round, reason: DeferReason) -> None:
        now = self._clock.monotonic_ms()
        backoff = self._config.defer_backoff_ms
        if reason is DeferReason.RATE_LIMITED and current.retry_after_ms > backoff:
            # A Tick before the limit passes would only open a round the limit refuses again.
            backoff = current.retry_after_ms
        self._standing.deferral = (
            defer(reason, now) if reason is DeferReason.LOCKED else defer(reason, now, backoff_ms=backoff)
        )
        current.record = replace(current.record, decision=f"deferred:{reason.value}")
        self._standing.state = RunState.DEFERRED

    async def finish(self, current: Round) -> RunRecord:
        now = self._clock.monotonic_ms()
        wall = self._clock.wall_ms()  # the record's times; the deferral measures on `now`
        visits = list(current.record.states)
        if visits and current.state not in (RunState.COOLING, RunState.DEFERRED):
            visits[-1] = replace(visits[-1], left_at_ms=wall)
        if current.state is RunState.COOLING:
            self._standing.state = RunState.COOLING
        elif current.state is RunState.DEFERRED:
            self._standing.state = RunState.DEFERRED
        else:
            # A round that stopped mid-way (an error, or no row for what happened) defers briefly.
            self._standing.state = RunState.DEFERRED
            self._standing.deferral = defer(
                DeferReason.LOW_VALUE, now, backoff_ms=self._config.defer_backoff_ms
            )
            if not current.record.decision:
                current.record = replace(current.record, decision="failed")
        record = replace(
            current.record, states=tuple(visits), finished_at=wall / 1000, notes=tuple(current.notes)
        )
        self._standing.recent_notes.append((record.run_id, tuple(current.notes)))
        current.record = record
        await self._ports.runs.save(record)
        await self._audit(record, current.notes)
        log.info(
            "run %s: %s -> %s (%d model calls)",
            record.run_id,
            " > ".join(v.state for v in record.states),
            record.decision,
            len(record.model_calls),
        )
        return record

    async def _audit(self, record: RunRecord, notes: list[str]) -> None:
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
            notes=notes,
        )
