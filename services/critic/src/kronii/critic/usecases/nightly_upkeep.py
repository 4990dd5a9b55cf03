"""Once a night, at the configured local hour: the clusters of yesterday's similar failures, then
retention (day files archived, old rows pruned). A night that fails is tried again the next."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta

from kronii.critic.ports import MemoryUpkeep
from kronii.foundation.clock import Clock

__all__ = ["NightlyUpkeep", "seconds_until"]

log = logging.getLogger(__name__)


def seconds_until(hour: int, now: datetime) -> float:
    """From ``now`` (local, naive) to the next ``hour`` o'clock."""
    at = now.replace(hour=hour, minute=0, second=0, microsecond=0)
    if at <= now:
        at += timedelta(days=1)
    return (at - now).total_seconds()


class NightlyUpkeep:
    def __init__(self, memory: MemoryUpkeep, clock: Clock, hour: int) -> None:
        self._memory = memory
        self._clock = clock
        self._hour = hour

    async def run(self) -> None:
        """Until cancelled (the service's stop)."""
        while True:
            await asyncio.sleep(seconds_until(self._hour, datetime.fromtimestamp(self._clock.wall())))
            try:
                clusters, retention = await self._memory.run_nightly()
                log.info("critic: %d cluster(s) of similar errors; retention %s", len(clusters), retention)
            except Exception:
                log.exception("critic: the nightly clustering and retention failed; it runs again tomorrow")
