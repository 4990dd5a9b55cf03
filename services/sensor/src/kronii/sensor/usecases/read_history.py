"""Read the activity history: the spans of a range a page at a time, and the time per app, per
title or per state inside it. The open spans (their end is now) and the closed ones the writer has not
written yet come from the sensor itself, so the history is never behind the writer."""

from __future__ import annotations

from dataclasses import dataclass

from kronii.foundation.clock import Clock
from kronii.sensor.core.activity_query import Cursor, SpanRecord, TimeRange
from kronii.sensor.core.spans import Span, SpanData, SpanKind, SummaryRow, summarize
from kronii.sensor.ports import SpanStore
from kronii.sensor.usecases.keep_spans import KeepSpans

__all__ = ["HistoryPage", "ReadHistory"]

# An open span not written yet has no row id: it sorts after the stored spans that start with it.
_UNSTORED = 2**62


@dataclass(frozen=True, slots=True)
class HistoryPage:
    spans: list[SpanRecord]
    next_cursor: Cursor | None


def _overlaps(record: SpanRecord, window: TimeRange) -> bool:
    return record.started_at < window.until and record.ended_at > window.since


def _as_span(record: SpanRecord) -> Span:
    data = SpanData(record.app, record.title, record.window_id, record.wm_class, record.state)
    return Span(record.span_id, SpanKind(record.kind), data, record.started_at, record.ended_at)


class ReadHistory:
    def __init__(self, store: SpanStore, spans: KeepSpans, clock: Clock) -> None:
        self._store = store
        self._spans = spans
        self._clock = clock

    def _open(self, window: TimeRange, app: str | None, kind: str | None) -> list[SpanRecord]:
        return [
            record
            for record in self._spans.unwritten_records(self._clock.wall())
            if _overlaps(record, window)
            and (app is None or record.app == app)
            and (kind is None or record.kind == kind)
        ]

    async def page(
        self, window: TimeRange, *, app: str | None, kind: str | None, limit: int, after: Cursor | None
    ) -> HistoryPage:
        """Spans overlapping the range by start, at most `limit`, after the cursor; an open span
        replaces its stored row (whose end is behind) or, not stored yet, comes in its place by start."""
        async with self._spans.steady():
            stored = await self._store.page(window, app=app, kind=kind, limit=limit + 1, after=after)
            opened = self._open(window, app, kind)
        by_id = {record.span_id: record for record in opened if record.span_id}
        merged = [by_id.get(record.span_id, record) for record in stored]
        unstored = [
            record
            for record in opened
            if not record.span_id
            and (after is None or (record.started_at, _UNSTORED) > (after.started_at, after.span_id))
        ]
        merged = sorted(
            merged + unstored, key=lambda record: (record.started_at, record.span_id or _UNSTORED)
        )
        if len(merged) <= limit:
            return HistoryPage(merged, None)
        page = merged[:limit]
        last = page[-1]
        return HistoryPage(page, Cursor(last.started_at, last.span_id or _UNSTORED))

    async def summary(self, window: TimeRange, by: str) -> list[SummaryRow]:
        """Seconds per key inside the range, each span clipped to it, most first."""
        async with self._spans.steady():
            opened = self._open(window, None, None)
            stored = await self._store.totals(window, by, leave_out=[r.span_id for r in opened if r.span_id])
        totals: dict[tuple[str, str], float] = {(row.key, row.app): row.seconds for row in stored}
        for row in summarize((_as_span(record) for record in opened), by, window.since, window.until):
            totals[(row.key, row.app)] = totals.get((row.key, row.app), 0.0) + row.seconds
        rows = [SummaryRow(key, app, seconds) for (key, app), seconds in totals.items() if seconds > 0]
        return sorted(rows, key=lambda row: (-row.seconds, row.key, row.app))
