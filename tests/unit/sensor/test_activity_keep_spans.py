"""KeepSpans and ReadHistory in process, with a fake span store and a ManualClock: what is written
when (closed spans a gather after the first closed, in one transaction; the open span's end at most
every flush interval; a zero-length span never), a store that fails and comes back, and the history
that answers the open span with its end at now and a closed span the writer has not written yet."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace

import pytest
from kronii.foundation.clock import ManualClock
from kronii.sensor.core.activity_query import Cursor, DeleteSelector, ImportedSpan, SpanRecord, TimeRange
from kronii.sensor.core.model import ActivityState, Focus
from kronii.sensor.core.spans import Span, SpanTracker, SummaryRow
from kronii.sensor.ports import StoreFailed
from kronii.sensor.usecases.keep_spans import KeepSpans
from kronii.sensor.usecases.read_history import ReadHistory

START = 1_796_000_000.0
XTERM = Focus(app_name="XTerm", wm_class="xterm.XTerm", window_id=11, title="mail to a@b.example")
EDITOR = Focus(app_name="gedit", wm_class="gedit.Gedit", window_id=12, title="notes")


class FakeSpans:
    def __init__(self) -> None:
        self.rows: dict[int, Span] = {}
        self.inserts = 0
        self.updates = 0
        self.transactions = 0
        self.failing = False

    async def insert(self, span: Span) -> int:
        if self.failing:
            raise StoreFailed("PostgreSQL is away")
        self.inserts += 1
        self.rows[len(self.rows) + 1] = span
        return len(self.rows)

    async def update_end(self, span_id: int, ended_at: float) -> None:
        if self.failing:
            raise StoreFailed("PostgreSQL is away")
        self.updates += 1
        self.rows[span_id] = replace(self.rows[span_id], ended_at=ended_at)

    async def write_closed(self, spans: Sequence[tuple[Span, int | None]]) -> None:
        if self.failing:
            raise StoreFailed("PostgreSQL is away")
        self.transactions += 1
        for span, row_id in spans:
            if row_id is None:
                self.inserts += 1
                self.rows[len(self.rows) + 1] = span
            else:
                self.updates += 1
                self.rows[row_id] = span

    async def page(
        self, window: TimeRange, *, app: str | None, kind: str | None, limit: int, after: Cursor | None
    ) -> list[SpanRecord]:
        records = [
            SpanRecord(
                row_id,
                span.kind.value,
                span.started_at,
                span.ended_at,
                span.data.app,
                span.data.title,
                state=span.data.state,
            )
            for row_id, span in sorted(self.rows.items(), key=lambda item: (item[1].started_at, item[0]))
            if span.started_at < window.until
            and span.ended_at > window.since
            and (kind is None or span.kind.value == kind)
        ]
        if after is not None:
            records = [
                record
                for record in records
                if (record.started_at, record.span_id) > (after.started_at, after.span_id)
            ]
        return records[:limit]

    async def totals(self, window: TimeRange, by: str, *, leave_out: Sequence[int]) -> list[SummaryRow]:
        return []

    async def delete(self, selector: DeleteSelector) -> tuple[int, int]:
        return (0, 0)

    async def prune(self, before: float) -> tuple[int, int]:
        return (0, 0)

    async def add_imported(self, spans: Sequence[ImportedSpan]) -> int:
        return 0


class Titles:
    def clean(self, focus: Focus) -> Focus:
        return replace(focus, title=focus.title.replace("a@b.example", "[EMAIL_1]"))


GATHER_SECS = 0.05


def _keeper(store: FakeSpans, clock: ManualClock) -> KeepSpans:
    return KeepSpans(SpanTracker(10.0), store, Titles(), clock, flush_secs=30.0, gather_secs=GATHER_SECS)


def _run(coroutine: object) -> None:
    asyncio.run(coroutine)  # type: ignore[arg-type]


def test_closed_spans_are_written_a_gather_after_the_first_in_one_transaction_titles_redacted() -> None:
    async def scenario() -> None:
        store, clock = FakeSpans(), ManualClock(START)
        keeper = _keeper(store, clock)
        writer = asyncio.create_task(keeper.run())
        keeper.observe(START, ActivityState.ACTIVE, XTERM, locked=False)
        keeper.observe(START + 4, ActivityState.ACTIVE, EDITOR, locked=False)
        await asyncio.sleep(GATHER_SECS / 5)
        keeper.observe(START + 6, ActivityState.ACTIVE, XTERM, locked=False)
        assert store.rows == {}, "written before the gather was over"
        await asyncio.sleep(GATHER_SECS * 3)
        focus = [span for span in store.rows.values() if span.kind.value == "focus"]
        assert [(span.data.title, span.started_at, span.ended_at) for span in focus] == [
            ("mail to [EMAIL_1]", START, START + 4),
            ("notes", START + 4, START + 6),
        ]
        assert store.transactions == 1
        writer.cancel()

    _run(scenario())


def test_history_answers_a_closed_span_the_writer_has_not_written_yet() -> None:
    async def scenario() -> None:
        store, clock = FakeSpans(), ManualClock(START)
        keeper = _keeper(store, clock)  # no writer running: the closed span waits in memory
        keeper.observe(START, ActivityState.ACTIVE, XTERM, locked=False)
        keeper.observe(START + 4, ActivityState.ACTIVE, EDITOR, locked=False)
        clock.advance(6)
        history = ReadHistory(store, keeper, clock)
        page = await history.page(
            TimeRange(START - 60, START + 60), app=None, kind="focus", limit=10, after=None
        )
        assert store.rows == {}
        assert [(record.app, record.ended_at, record.open) for record in page.spans] == [
            ("XTerm", START + 4, False),
            ("gedit", START + 6, True),
        ]
        totals = await history.summary(TimeRange(START - 60, START + 60), "app")
        assert {(row.key, row.seconds) for row in totals} == {("XTerm", 4.0), ("gedit", 2.0)}

    _run(scenario())


def test_the_open_span_is_written_only_at_a_flush_and_then_updated_not_inserted_again() -> None:
    async def scenario() -> None:
        store, clock = FakeSpans(), ManualClock(START)
        keeper = _keeper(store, clock)
        for second in range(0, 61):
            keeper.observe(START + second, ActivityState.ACTIVE, XTERM, locked=False)
        assert store.rows == {}  # nothing closed, no flush yet: no write on the event path
        await keeper.flush()
        assert store.inserts == 2 and store.updates == 0  # the state span and the focus span
        keeper.observe(START + 62, ActivityState.ACTIVE, XTERM, locked=False)
        await keeper.flush()
        assert store.inserts == 2 and store.updates == 2
        await keeper.flush()  # nothing moved since: nothing written
        assert store.updates == 2
        assert {span.ended_at for span in store.rows.values()} == {START + 62}

    _run(scenario())


def test_a_span_of_no_length_is_never_written() -> None:
    async def scenario() -> None:
        store, clock = FakeSpans(), ManualClock(START)
        keeper = _keeper(store, clock)
        keeper.observe(START, ActivityState.ACTIVE, XTERM, locked=False)
        keeper.observe(START, ActivityState.ACTIVE, EDITOR, locked=False)
        await keeper.flush()
        assert [span.data.app for span in store.rows.values() if span.kind.value == "focus"] == []

    _run(scenario())


def test_closed_spans_wait_while_the_store_fails_and_are_written_when_it_is_back() -> None:
    async def scenario() -> None:
        store, clock = FakeSpans(), ManualClock(START)
        keeper = _keeper(store, clock)
        store.failing = True
        keeper.observe(START, ActivityState.ACTIVE, XTERM, locked=False)
        keeper.observe(START + 5, ActivityState.ACTIVE, EDITOR, locked=False)
        await keeper.flush()
        assert store.rows == {}
        store.failing = False
        await keeper.flush()
        focus = next(span for span in store.rows.values() if span.kind.value == "focus")
        assert (focus.data.app, focus.ended_at) == ("XTerm", START + 5)

    _run(scenario())


def test_locking_closes_the_focus_span_and_stop_closes_the_rest_at_last_seen() -> None:
    async def scenario() -> None:
        store, clock = FakeSpans(), ManualClock(START)
        keeper = _keeper(store, clock)
        keeper.observe(START, ActivityState.ACTIVE, XTERM, locked=False)
        keeper.observe(START + 3, ActivityState.LOCKED, XTERM, locked=True)
        keeper.observe(START + 8, ActivityState.LOCKED, XTERM, locked=True)
        await keeper.stop()
        spans = sorted(
            (span.kind.value, span.data.state, span.started_at, span.ended_at) for span in store.rows.values()
        )
        assert spans == [
            ("focus", "", START, START + 3),
            ("state", "active", START, START + 3),
            ("state", "locked", START + 3, START + 8),
        ]

    _run(scenario())


def test_history_answers_the_open_span_with_its_end_at_now_in_place_of_its_stale_row() -> None:
    async def scenario() -> None:
        store, clock = FakeSpans(), ManualClock(START)
        keeper = _keeper(store, clock)
        keeper.observe(START, ActivityState.ACTIVE, XTERM, locked=False)
        keeper.observe(START + 5, ActivityState.ACTIVE, XTERM, locked=False)
        await keeper.flush()  # the row ends at +5
        clock.advance(20)
        page = await ReadHistory(store, keeper, clock).page(
            TimeRange(START - 60, START + 60), app=None, kind="focus", limit=10, after=None
        )
        assert [(record.span_id, record.ended_at, record.open) for record in page.spans] == [
            (2, START + 20, True)
        ]

    _run(scenario())


@pytest.mark.parametrize("limit", [1, 2])
def test_history_pages_put_an_unwritten_open_span_after_the_stored_ones(limit: int) -> None:
    async def scenario() -> None:
        store, clock = FakeSpans(), ManualClock(START)
        keeper = _keeper(store, clock)
        writer = asyncio.create_task(keeper.run())  # writes what closes; the open span waits for a flush
        keeper.observe(START, ActivityState.ACTIVE, XTERM, locked=False)
        keeper.observe(START + 5, ActivityState.ACTIVE, EDITOR, locked=False)  # XTerm closed and written
        keeper.observe(START + 6, ActivityState.ACTIVE, EDITOR, locked=False)
        await asyncio.sleep(GATHER_SECS * 3)
        writer.cancel()
        assert [span.data.app for span in store.rows.values() if span.kind.value == "focus"] == ["XTerm"]
        history, seen, after = ReadHistory(store, keeper, clock), [], None
        window = TimeRange(START - 60, START + 60)
        while True:
            page = await history.page(window, app=None, kind="focus", limit=limit, after=after)
            seen += [(record.app, record.open) for record in page.spans]
            if page.next_cursor is None:
                break
            after = page.next_cursor
        assert seen == [("XTerm", False), ("gedit", True)]

    _run(scenario())


class _Published:
    async def __call__(self, effect: object, received: float) -> None:
        return None


class _Snapshot:
    async def store(self, now: float) -> None:
        return None


class _Display:
    def count_errors(self) -> None:
        return None


def test_take_activity_samples_a_chatty_title_at_the_tick_but_a_focus_change_at_once() -> None:
    from kronii.sensor.core.machine import SensorCore
    from kronii.sensor.core.model import FocusObserved, Tick
    from kronii.sensor.core.params import SensorParams
    from kronii.sensor.usecases.take_activity import TakeActivity

    async def scenario() -> None:
        store, clock = FakeSpans(), ManualClock(START)
        keeper = _keeper(store, clock)
        core = SensorCore(SensorParams(), START)
        take = TakeActivity(core, _Published(), _Snapshot(), _Display(), clock, keeper)  # type: ignore[arg-type]
        inputs: list[FocusObserved | Tick] = [FocusObserved(START, XTERM), Tick(START + 0.01, 0)]
        for tenth in range(1, 30):  # a build rewrites its title ten times a second for 3 s
            inputs.append(FocusObserved(START + tenth / 10, replace(XTERM, title=f"building {tenth}")))
            if tenth % 10 == 0:
                inputs.append(Tick(START + tenth / 10 + 0.001, 0))
        inputs.append(FocusObserved(START + 3.05, EDITOR))  # a real switch: a span boundary at its time
        inputs.append(Tick(START + 3.5, 0))
        for event in inputs:
            take.offer(event, 0.0)
        runner = asyncio.create_task(take.run())
        await asyncio.sleep(0.1)
        runner.cancel()
        await keeper.stop()
        focus = sorted(
            (span.started_at, span.data.title) for span in store.rows.values() if span.kind.value == "focus"
        )
        assert len(focus) <= 5, focus  # the first title, and one sample per Tick: not 30
        assert focus[-1] == (START + 3.05, "notes")  # only the gedit span, opened at the switch, is after 3 s

    _run(scenario())
