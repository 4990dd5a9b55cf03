"""The watchers of the activity (gRPC WatchActivity): each has a queue of the events published; a
watcher that falls behind loses its oldest event, never slows the sensor."""

from __future__ import annotations

import asyncio
import contextlib

from kronii.sensor.core.snapshot import ActivityEvent

__all__ = ["ActivityFeed"]

_WATCH_QUEUE = 1000


class ActivityFeed:
    def __init__(self) -> None:
        self._watchers: set[asyncio.Queue[ActivityEvent]] = set()

    def watch(self) -> asyncio.Queue[ActivityEvent]:
        queue: asyncio.Queue[ActivityEvent] = asyncio.Queue(maxsize=_WATCH_QUEUE)
        self._watchers.add(queue)
        return queue

    def unwatch(self, queue: asyncio.Queue[ActivityEvent]) -> None:
        self._watchers.discard(queue)

    def offer(self, event: ActivityEvent) -> None:
        for queue in list(self._watchers):
            if queue.full():
                with contextlib.suppress(asyncio.QueueEmpty):
                    queue.get_nowait()
            queue.put_nowait(event)
