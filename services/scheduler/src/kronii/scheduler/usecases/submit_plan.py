"""Apply a Planner's plan: the slot's wake-up, the cooldown and the trigger filters, inside the
plan's audit row's transaction, answered only once both stand."""

from __future__ import annotations

import logging
from typing import Any

from kronii.foundation.clock import Clock
from kronii.scheduler.core.commands import PlanCommand, PlanOutcome
from kronii.scheduler.core.model import AppliedPlan, InvalidRequest, Limits
from kronii.scheduler.core.rules import apply_plan
from kronii.scheduler.metrics import SchedulerMetrics
from kronii.scheduler.ports import DurableRecord, TimerStore
from kronii.scheduler.usecases.ids import new_wakeup_id

__all__ = ["SubmitPlan"]

log = logging.getLogger(__name__)


def _outcome(applied: AppliedPlan, wall_offset: float) -> PlanOutcome:
    """What the plan set, said on the wall clock."""
    wakeup, cooldown = applied.wakeup, applied.cooldown
    return PlanOutcome(
        wakeup_id=wakeup.wakeup_id if wakeup is not None else "",
        wakeup_at=wakeup.due_at + wall_offset if wakeup is not None else None,
        cooldown_until=cooldown.until + wall_offset if cooldown is not None else None,
        filters={item: until + wall_offset for item, until in applied.filters.items()},
    )


class SubmitPlan:
    def __init__(
        self,
        timers: TimerStore,
        records: DurableRecord,
        clock: Clock,
        limits: Limits,
        metrics: SchedulerMetrics,
    ) -> None:
        self._timers = timers
        self._records = records
        self._clock = clock
        self._limits = limits
        self._metrics = metrics

    async def __call__(self, command: PlanCommand) -> PlanOutcome:
        """Raises InvalidRequest naming the field, StoreUnavailable when the plan's row (and so the
        plan) could not be committed."""
        now = self._clock.monotonic()
        wall_offset = self._clock.wall() - now
        try:
            applied = apply_plan(command.on_duration_clock(wall_offset), now, self._limits, new_wakeup_id())
        except InvalidRequest:
            self._metrics.plans.labels("invalid").inc()
            raise
        self._records.require_postgres()
        actor = command.run_id or "planner"
        if applied.ignored:
            await self._records.record(
                actor=actor,
                action="schedule.plan",
                subject=command.app,
                outcome="ignored",
                reason=applied.ignored,
            )
            self._metrics.plans.labels("ignored").inc()
            log.info("plan from run %s ignored: %s", command.run_id or "?", applied.ignored)
            return _outcome(applied, wall_offset)
        await self._apply(applied, command, actor, wall_offset)
        self._metrics.plans.labels("applied").inc()
        wakeup_in = f"{applied.wakeup.due_at - now:.1f} s" if applied.wakeup is not None else "never"
        cooldown = f"{applied.cooldown.until - now:.1f} s" if applied.cooldown is not None else "none"
        log.info(
            "plan from run %s for %s: wake-up in %s, cooldown %s, filters %s",
            command.run_id or "?",
            command.app or "(global)",
            wakeup_in,
            cooldown,
            ", ".join(applied.filters) or "none",
        )
        return _outcome(applied, wall_offset)

    async def _apply(
        self, applied: AppliedPlan, command: PlanCommand, actor: str, wall_offset: float
    ) -> None:
        timers = self._timers

        async def apply(_session: Any) -> None:
            if applied.wakeup is not None:
                await timers.put_wakeup(applied.wakeup)
            await timers.set_cooldown(applied.cooldown)
            await timers.merge_filters(applied.filters)

        # The plan takes effect inside its audit row's transaction: answered only once both stand.
        await self._records.record_durably(
            actor=actor,
            action="schedule.plan",
            subject=command.app,
            outcome="applied",
            then=apply,
            wakeup_at=applied.wakeup.due_at + wall_offset if applied.wakeup is not None else None,
            cooldown_until=applied.cooldown.until + wall_offset if applied.cooldown is not None else None,
            filters=sorted(applied.filters),
        )
