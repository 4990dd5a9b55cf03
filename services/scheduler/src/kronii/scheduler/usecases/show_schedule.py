"""The schedule as shown: pending wake-ups, the cooldown, live filters, run counters and ceilings,
every time on the wall clock."""

from __future__ import annotations

from dataclasses import replace

from kronii.foundation.clock import Clock
from kronii.scheduler.core.commands import CooldownState, PendingWakeup, RunCount, ScheduleSnapshot
from kronii.scheduler.core.model import Cooldown, Limits, WakeUp
from kronii.scheduler.ports import TimerStore

__all__ = ["ShowSchedule"]


def _pending(wakeup: WakeUp, now: float, wall_offset: float) -> PendingWakeup:
    return PendingWakeup(replace(wakeup, due_at=wakeup.due_at + wall_offset), due_in_secs=wakeup.due_at - now)


def _cooldown(cooldown: Cooldown | None, now: float, wall_offset: float) -> CooldownState | None:
    if cooldown is None:
        return None
    shown = replace(cooldown, until=cooldown.until + wall_offset)
    return CooldownState(shown, remaining_secs=cooldown.until - now)


class ShowSchedule:
    def __init__(self, timers: TimerStore, clock: Clock, limits: Limits) -> None:
        self._timers = timers
        self._clock = clock
        self._limits = limits

    async def __call__(self) -> ScheduleSnapshot:
        timers, limits = self._timers, self._limits
        now = self._clock.monotonic()
        wall_offset = self._clock.wall() - now
        wakeups = await timers.pending()
        apps = await timers.apps_with_runs(now)
        app_runs = [
            RunCount(app, len(await timers.app_runs(app, now)), limits.app_runs_per_hour) for app in apps
        ]
        cooldown = _cooldown(await timers.cooldown(now), now, wall_offset)
        filters = {item: until + wall_offset for item, until in (await timers.filters(now)).items()}
        global_runs = RunCount("global", len(await timers.global_runs(now)), limits.global_runs_per_hour)
        return ScheduleSnapshot(
            now=now + wall_offset,
            wakeups=tuple(_pending(wakeup, now, wall_offset) for wakeup in wakeups),
            cooldown=cooldown,
            filters=filters,
            global_runs=global_runs,
            app_runs=tuple(app_runs),
            global_ceiling_per_hour=limits.global_runs_per_hour,
            app_ceiling_per_hour=limits.app_runs_per_hour,
        )
