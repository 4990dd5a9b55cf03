"""Triggers in, rounds out: every external trigger is taken at once (the lock's start and end act on
the machine directly, the rest are coalesced by the core's Intake); `advance` ends a cooldown or a
deferral that is due, releases the batches whose window closed, and opens a round for each batch the
machine's standing state (Idle, Cooling, Deferred) lets through."""

from __future__ import annotations

from kronii.foundation.audit_trail import AuditTrail
from kronii.foundation.clock import Clock
from kronii.pipeline.core.deferral import DeferReason, defer, deferral_over
from kronii.pipeline.core.intake import Batch, Intake
from kronii.pipeline.core.machine import Facts, NoTransition, Step, step
from kronii.pipeline.core.round import RunnerConfig
from kronii.pipeline.core.runs import RunRecord
from kronii.pipeline.core.states import EXTERNAL_TRIGGERS, ROUND_TRIGGERS, RunState, Trigger, TriggerKind
from kronii.pipeline.usecases.round_state import Standing
from kronii.pipeline.usecases.run_round import Rounds

__all__ = ["TriggerIntake"]


class TriggerIntake:
    def __init__(
        self, standing: Standing, rounds: Rounds, audit: AuditTrail, config: RunnerConfig, clock: Clock
    ) -> None:
        self._standing = standing
        self._rounds = rounds
        self._audit = audit
        self._clock = clock
        self.intake = Intake(config.coalesce_window_ms, config.title_max_changes)

    async def submit(self, trigger: Trigger) -> str:
        """Take one external trigger; returns what became of it (never waits on a round)."""
        standing = self._standing
        if trigger.kind not in EXTERNAL_TRIGGERS:
            raise ValueError(f"{trigger.kind} is the pipeline's own signal, not an external trigger")
        if trigger.kind is TriggerKind.LOCK_START:
            standing.locked = True
            if standing.current is None:
                await self._lock_while_idle(trigger)
            return "locked"
        if trigger.kind is TriggerKind.LOCK_END:
            standing.locked = False
            if standing.current is None and standing.state is RunState.DEFERRED:
                standing.waiting.clear()  # seed row 3: do not backfill what came in while deferred
                standing.waiting.append(Batch(trigger, trigger, 1, trigger.at_ms, high_priority=True))
            return "unlocked"
        current = standing.current
        if current is not None and current.state is RunState.AWAITING_CAPTURE and trigger.high_priority:
            standing.preempt.put_nowait(trigger)
        return self.intake.offer(trigger).value

    async def _lock_while_idle(self, trigger: Trigger) -> None:
        if self._standing.state is not RunState.IDLE:
            return
        outcome = step(RunState.IDLE, trigger, Facts(locked=True))
        if isinstance(outcome, Step):
            self._standing.state = outcome.target
            self._standing.deferral = defer(DeferReason.LOCKED, trigger.at_ms)
            await self._audit(actor="pipeline", action="pipeline.defer", subject="lock", outcome="locked")

    async def advance(self) -> list[RunRecord]:
        """Release due batches and run their rounds; returns the records of the rounds that ended."""
        now = self._clock.monotonic_ms()
        self._end_cooldown_if_due(now)
        finished: list[RunRecord] = []
        resumed = self._resume_if_due(now)
        waiting = self._standing.waiting
        if resumed is not None:
            waiting.append(resumed)
        waiting.extend(self.intake.release(now))
        while waiting:
            batch = waiting.popleft()
            record = await self._take(batch)
            if record is not None:
                finished.append(record)
        return finished

    def _end_cooldown_if_due(self, now: int) -> None:
        # The cooldown's own Tick (seed row 17, "reaches min interval"): the core's safety net for
        # the cooldown it set itself, so the round loop does not depend on the scheduler being up.
        standing = self._standing
        if standing.state is RunState.COOLING and now >= standing.cooling_until_ms:
            tick = Trigger(TriggerKind.TICK, now)
            outcome = step(RunState.COOLING, tick, Facts(cooldown_reached=True))
            if isinstance(outcome, Step):
                standing.state = outcome.target

    def _resume_if_due(self, now: int) -> Batch | None:
        standing = self._standing
        if standing.state is not RunState.DEFERRED or standing.deferral is None or standing.waiting:
            return None
        if not deferral_over(standing.deferral, now, standing.locked):
            return None
        tick = Trigger(TriggerKind.TICK, now)
        return Batch(tick, tick, 1, now)

    async def _take(self, batch: Batch) -> RunRecord | None:
        standing = self._standing
        trigger = batch.last
        now = self._clock.monotonic_ms()
        if standing.state is RunState.COOLING:
            facts = Facts(cooldown_reached=now >= standing.cooling_until_ms)
            outcome = step(RunState.COOLING, trigger, facts)
            if isinstance(outcome, NoTransition):
                return None
            standing.state = outcome.target
        if standing.state is RunState.DEFERRED:
            over = standing.deferral is None or deferral_over(standing.deferral, now, standing.locked)
            outcome = step(RunState.DEFERRED, trigger, Facts(deferral_over=over, locked=standing.locked))
            if isinstance(outcome, NoTransition):
                return None
            return await self._rounds.run(batch, outcome)
        if standing.state is not RunState.IDLE or trigger.kind not in ROUND_TRIGGERS:
            return None
        outcome = step(RunState.IDLE, trigger, Facts(locked=standing.locked))
        if isinstance(outcome, NoTransition):
            return None
        return await self._rounds.run(batch, outcome)
