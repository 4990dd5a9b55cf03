"""Keep the activity history: every input the sensor takes is a heartbeat of the state series and
of the focus series (title redacted); the span rules (core/spans.py) merge them, and what they close
is written off the event path, like the envelopes: `gather_secs` after the first close, all closed
spans in one transaction. The open span's end is written at most every `flush_secs` and when it
closes; a span never written with a length is never written at all. The history reads what is not
written yet from here (`unwritten_records`), so it is never behind the writer."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from kronii.foundation.clock import Clock
from kronii.sensor.core.activity_query import SpanRecord
from kronii.sensor.core.model import ActivityState, Focus
from kronii.sensor.core.spans import Span, SpanChange, SpanData, SpanKind, SpanTracker
from kronii.sensor.ports import SpanStore, StoreFailed, TitleCleaner
from kronii.sensor.usecases.record_activity import GATHER_SECS

__all__ = ["KeepSpans", "focus_data"]

log = logging.getLogger(__name__)

# Closed spans waiting for the database; past this many (PostgreSQL away for hours) the oldest go.
_PENDING_MAX = 10_000


def focus_data(focus: Focus, locked: bool) -> SpanData | None:
    """What the focus series records: nothing while locked or with no window focused."""
    if locked or not focus.window_id:
        return None
    return SpanData(app=focus.app_name, title=focus.title, window_id=focus.window_id, wm_class=focus.wm_class)


class KeepSpans:
    def __init__(
        self,
        tracker: SpanTracker,
        store: SpanStore | None,
        titles: TitleCleaner,
        clock: Clock,
        flush_secs: float,
        gather_secs: float = GATHER_SECS,
    ) -> None:
        self._tracker = tracker
        self._store = store
        self._titles = titles
        self._clock = clock
        self._flush_secs = flush_secs
        self._gather_secs = gather_secs
        self._closed: list[Span] = []
        self._row_ids: dict[int, int] = {}  # span key -> row id, for the spans written while open
        self._written_end: dict[int, float] = {}
        self._wake = asyncio.Event()
        self._lock = asyncio.Lock()

    # ---- the event path (no I/O) -------------------------------------------------------------

    def observe(self, at: float, state: ActivityState, focus: Focus, locked: bool) -> None:
        """One heartbeat of each series at `at`."""
        self._take(self._tracker.heartbeat(SpanKind.STATE, SpanData(state=state.value), at))
        cleaned = self._titles.clean(focus) if focus.title and not locked else focus
        self._take(self._tracker.heartbeat(SpanKind.FOCUS, focus_data(cleaned, locked), at))

    def _take(self, changes: list[tuple[SpanChange, Span]]) -> None:
        for change, span in changes:
            if change is SpanChange.CLOSED:
                self._closed.append(span)
                self._wake.set()
            elif change is SpanChange.DROPPED:
                self._forget(span.key)
        if len(self._closed) > _PENDING_MAX:
            log.warning(
                "the history writer is behind; dropping %d closed spans", len(self._closed) - _PENDING_MAX
            )
            del self._closed[: len(self._closed) - _PENDING_MAX]

    def _forget(self, key: int) -> None:
        self._row_ids.pop(key, None)
        self._written_end.pop(key, None)

    # ---- what the history reads -----------------------------------------------------------------

    def unwritten_records(self, now: float) -> list[SpanRecord]:
        """What the database does not hold yet, or holds with an older end: the spans closed and
        waiting for the writer, and the open ones with their end at now. Read under `steady`."""
        return [
            *(self._record(span, span.ended_at, is_open=False) for span in self._closed),
            *(
                self._record(span, max(now, span.ended_at), is_open=True)
                for span in self._tracker.open_spans().values()
            ),
        ]

    def _record(self, span: Span, ended_at: float, *, is_open: bool) -> SpanRecord:
        return SpanRecord(
            span_id=self._row_ids.get(span.key, 0),
            kind=span.kind.value,
            started_at=span.started_at,
            ended_at=ended_at,
            app=span.data.app,
            title=span.data.title,
            window_id=span.data.window_id,
            wm_class=span.data.wm_class,
            state=span.data.state,
            open=is_open,
        )

    @contextlib.asynccontextmanager
    async def steady(self) -> AsyncIterator[None]:
        """Hold the writer while the caller reads the database and `unwritten_records`: no span moves
        from one to the other in between."""
        async with self._lock:
            yield

    # ---- the writer ---------------------------------------------------------------------------

    async def run(self) -> None:
        """Write closed spans as they close and the open spans' ends every `flush_secs`, forever."""
        last_flush = self._clock.monotonic()
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self._flush_secs)
            self._wake.clear()
            if self._closed:
                await asyncio.sleep(self._gather_secs)
            async with self._lock:
                await self._write_closed()
                if self._clock.monotonic() - last_flush >= self._flush_secs:
                    await self._write_open()
                    last_flush = self._clock.monotonic()

    async def stop(self) -> None:
        """The sensor stops: the open spans close at their last seen time and are written."""
        async with self._lock:
            self._take(self._tracker.stop())
            await self._write_closed()

    @contextlib.asynccontextmanager
    async def cut(self) -> AsyncIterator[None]:
        """Close and write the open spans now, and hold the writer while the caller works (a
        person's delete): nothing it deletes is written back by an open span afterwards."""
        async with self._lock:
            self._take(self._tracker.cut(self._clock.wall()))
            await self._write_closed()
            yield

    async def flush(self) -> None:
        """Write what has closed and the open spans' ends now (tests, the benchmark)."""
        async with self._lock:
            await self._write_closed()
            await self._write_open()

    async def _write_closed(self) -> None:
        """Every closed span waiting, in one transaction (a focus change closes one or two)."""
        if self._store is None:
            self._closed.clear()
            return
        if not self._closed:
            return
        waiting = list(self._closed)
        try:
            await self._store.write_closed([(span, self._row_ids.get(span.key)) for span in waiting])
        except StoreFailed as error:
            log.warning("writing %d closed activity spans failed: %s", len(waiting), error)
            return
        del self._closed[: len(waiting)]
        for span in waiting:
            self._forget(span.key)

    async def _write_open(self) -> None:
        if self._store is None:
            return
        for span in list(self._tracker.open_spans().values()):
            if span.ended_at <= span.started_at or self._written_end.get(span.key) == span.ended_at:
                continue
            try:
                await self._write(span)
            except StoreFailed as error:
                log.warning("writing the open %s span failed: %s", span.kind.value, error)
                return

    async def _write(self, span: Span) -> None:
        assert self._store is not None
        row_id = self._row_ids.get(span.key)
        if row_id is None:
            self._row_ids[span.key] = await self._store.insert(span)
        else:
            await self._store.update_end(row_id, span.ended_at)
        self._written_end[span.key] = span.ended_at
