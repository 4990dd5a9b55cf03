"""The one front the sensor's API calls: the latest snapshot, the stream of activity events, and
the activity history (read, delete, import)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from kronii.foundation.errors import Unavailable
from kronii.sensor.core.activity_query import Cursor, DeleteSelector, ImportedSpan, TimeRange
from kronii.sensor.core.snapshot import ActivityEvent, SensorSnapshot
from kronii.sensor.core.spans import SummaryRow
from kronii.sensor.usecases.forget_activity import Deleted, ForgetActivity
from kronii.sensor.usecases.import_activity import ImportActivity, Imported
from kronii.sensor.usecases.keep_snapshot import KeepSnapshot
from kronii.sensor.usecases.read_history import HistoryPage, ReadHistory
from kronii.sensor.usecases.watch_activity import ActivityFeed

__all__ = ["ActivityHistory", "SensorOperations"]


@dataclass(frozen=True, slots=True)
class ActivityHistory:
    """The history's use cases; absent when the sensor runs without PostgreSQL."""

    read: ReadHistory
    forget: ForgetActivity
    bring_in: ImportActivity


class SensorOperations:
    def __init__(
        self, snapshot: KeepSnapshot, feed: ActivityFeed, history: ActivityHistory | None = None
    ) -> None:
        self._snapshot = snapshot
        self._feed = feed
        self._history = history

    async def snapshot(self) -> SensorSnapshot:
        """The latest snapshot as kept in Redis; raises LookupError when there is none yet."""
        return await self._snapshot.latest()

    def watch(self) -> asyncio.Queue[ActivityEvent]:
        """A queue of every event published from now on; give it back with `unwatch`."""
        return self._feed.watch()

    def unwatch(self, queue: asyncio.Queue[ActivityEvent]) -> None:
        self._feed.unwatch(queue)

    def _kept(self) -> ActivityHistory:
        if self._history is None:
            raise Unavailable("the activity history needs PostgreSQL, and the sensor runs without it")
        return self._history

    async def spans(
        self, window: TimeRange, *, app: str | None, kind: str | None, limit: int, after: Cursor | None
    ) -> HistoryPage:
        return await self._kept().read.page(window, app=app, kind=kind, limit=limit, after=after)

    async def summary(self, window: TimeRange, by: str) -> list[SummaryRow]:
        return await self._kept().read.summary(window, by)

    async def delete_activity(self, selector: DeleteSelector, actor: str) -> Deleted:
        return await self._kept().forget.delete(selector, actor)

    async def import_activity(self, spans: Sequence[ImportedSpan], source: str, actor: str) -> Imported:
        return await self._kept().bring_in.add(spans, source, actor)
