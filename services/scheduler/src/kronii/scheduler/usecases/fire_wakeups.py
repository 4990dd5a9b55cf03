"""Fire the due wake-ups: one Tick each, then the safety net moved to after it. Polled on a loop;
every time kept on the duration clock, the Tick's times said on the wall clock."""

from __future__ import annotations

import asyncio
import logging

from kronii.foundation.clock import Clock
from kronii.scheduler.core.commands import FiredTick
from kronii.scheduler.core.model import SAFETY_NET_SLOT, Limits, WakeUp
from kronii.scheduler.core.rules import safety_net_after
from kronii.scheduler.metrics import SchedulerMetrics
from kronii.scheduler.ports import TickPublisher, TimerStore
from kronii.scheduler.usecases.audit_later import AuditLater
from kronii.scheduler.usecases.ids import new_wakeup_id

__all__ = ["FireDueWakeups"]

log = logging.getLogger(__name__)


class FireDueWakeups:
    def __init__(
        self,
        timers: TimerStore,
        ticks: TickPublisher,
        clock: Clock,
        limits: Limits,
        metrics: SchedulerMetrics,
        audit: AuditLater,
    ) -> None:
        self._timers = timers
        self._ticks = ticks
        self._clock = clock
        self._limits = limits
        self._metrics = metrics
        self._audit = audit
        self.problem = ""

    async def __call__(self) -> int:
        """Publish one Tick per due wake-up; returns how many fired."""
        timers = self._timers
        now = self._clock.monotonic()
        # First start, or Redis lost its data: there is always a safety net.
        if not await timers.has_slot(SAFETY_NET_SLOT):
            await timers.put_wakeup(safety_net_after(now, self._limits, new_wakeup_id()))
        fired = 0
        for wakeup in await timers.claim_due(now):
            await self._fire(wakeup)
            fired += 1
        self._metrics.pending.set(await timers.count_pending())
        return fired

    async def poll(self, interval: float) -> None:
        """Fire what is due every `interval` seconds, forever; `problem` says why the last round
        failed (empty: it did not)."""
        while True:
            try:
                await self()
                self.problem = ""
            except Exception as error:
                if not self.problem:
                    log.warning("polling for due wake-ups failed: %s", error)
                self.problem = f"{type(error).__name__}: {error}"[:200]
                self._metrics.poll_errors.inc()
            await asyncio.sleep(interval)

    async def _fire(self, wakeup: WakeUp) -> None:
        fired_at = self._clock.monotonic()
        wall_offset = self._clock.wall() - fired_at
        # Unconfirmed (publish failed) means the lease runs out and the wake-up fires again.
        await self._ticks.publish(
            FiredTick(
                wakeup_id=wakeup.wakeup_id,
                due_at=wakeup.due_at + wall_offset,
                fired_at=fired_at + wall_offset,
                kind=wakeup.kind,
                app=wakeup.app,
                run_id=wakeup.run_id,
                reason=wakeup.reason,
            )
        )
        await self._timers.done(wakeup)
        await self._timers.put_wakeup(safety_net_after(fired_at, self._limits, new_wakeup_id()))
        metrics = self._metrics
        metrics.ticks.labels(wakeup.kind.value).inc()
        metrics.last_tick.set(fired_at + wall_offset)  # Unix wall time
        metrics.tick_lateness.observe(max(0.0, fired_at - wakeup.due_at))
        log.info(
            "tick %s (%s) for %s, %.3f s after its due time",
            wakeup.wakeup_id,
            wakeup.kind.value,
            wakeup.app or wakeup.slot,
            fired_at - wakeup.due_at,
        )
        self._audit(
            actor="scheduler",
            action="schedule.tick",
            subject=wakeup.app or wakeup.slot,
            outcome=wakeup.kind.value,
            wakeup_id=wakeup.wakeup_id,
            run_id=wakeup.run_id,
        )
