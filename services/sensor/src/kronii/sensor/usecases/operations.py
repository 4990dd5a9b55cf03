"""The one front the sensor's API calls: the latest snapshot, and the stream of activity events."""

from __future__ import annotations

import asyncio

from kronii.sensor.core.snapshot import ActivityEvent, SensorSnapshot
from kronii.sensor.usecases.keep_snapshot import KeepSnapshot
from kronii.sensor.usecases.watch_activity import ActivityFeed

__all__ = ["SensorOperations"]


class SensorOperations:
    def __init__(self, snapshot: KeepSnapshot, feed: ActivityFeed) -> None:
        self._snapshot = snapshot
        self._feed = feed

    async def snapshot(self) -> SensorSnapshot:
        """The latest snapshot as kept in Redis; raises LookupError when there is none yet."""
        return await self._snapshot.latest()

    def watch(self) -> asyncio.Queue[ActivityEvent]:
        """A queue of every event published from now on; give it back with `unwatch`."""
        return self._feed.watch()

    def unwatch(self, queue: asyncio.Queue[ActivityEvent]) -> None:
        self._feed.unwatch(queue)
