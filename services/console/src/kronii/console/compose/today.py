"""Today's use case, made once at start: the sensor's history over HTTP, the person's timezone."""

from __future__ import annotations

from kronii.console.adapters.sensor_history import SensorHistory
from kronii.console.adapters.timezone import person_timezone
from kronii.console.deps import ConsoleDeps
from kronii.console.usecases.show_today import ShowToday

__all__ = ["build"]


async def build(deps: ConsoleDeps) -> ShowToday:
    return ShowToday(SensorHistory(deps.services), deps.clock, person_timezone(deps.settings.timezone))
