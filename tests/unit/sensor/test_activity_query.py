"""The history's questions checked before they reach PostgreSQL: ranges, cursors, what to delete,
imported spans; and the summary's clipping of spans to the range."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from kronii.sensor.core.activity_query import (
    Cursor,
    DeleteSelector,
    ImportedSpan,
    TimeRange,
    decode_cursor,
    encode_cursor,
    iso_utc,
    parse_range,
)
from kronii.sensor.core.spans import Span, SpanData, SpanKind, clipped_seconds, summarize

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC).timestamp()
NINE = datetime(2026, 12, 6, 9, 0, tzinfo=UTC).timestamp()


def test_range_reads_iso_with_z_and_offsets() -> None:
    window = parse_range("2026-12-06T09:00:00Z", "2026-12-06T11:00:00+01:00", NOW)
    assert (window.since, window.until) == (NINE, NINE + 3600)


def test_range_defaults_to_the_last_day_until_now() -> None:
    assert parse_range(None, None, NOW) == TimeRange(NOW - 86400, NOW)


def test_range_refuses_text_that_is_not_iso_with_a_sentence() -> None:
    with pytest.raises(ValueError, match=r"since 'yesterday' is not an ISO-8601 date and time"):
        parse_range("yesterday", None, NOW)


def test_range_refuses_times_out_of_range_with_a_sentence() -> None:
    with pytest.raises(ValueError, match="out of range"):
        parse_range("0001-01-01T00:00:00+01:00", None, NOW)
    with pytest.raises(ValueError, match="not one this service gave out"):
        decode_cursor(encode_cursor(Cursor(1e15, 1)))


def test_range_refuses_until_not_after_since() -> None:
    with pytest.raises(ValueError, match="must be after since"):
        parse_range("2026-12-06T10:00:00Z", "2026-12-06T10:00:00Z", NOW)


def test_range_refuses_more_than_400_days() -> None:
    parse_range("2025-11-02T00:00:00Z", "2026-12-06T00:00:00Z", NOW)  # 399 days: taken
    with pytest.raises(ValueError, match="longer than 400 days"):
        parse_range("2025-10-01T00:00:00Z", "2026-12-06T00:00:00Z", NOW)


def test_cursor_round_trips_and_a_forged_one_is_refused() -> None:
    cursor = Cursor(NINE + 0.123456, 42)
    assert decode_cursor(encode_cursor(cursor)) == cursor
    with pytest.raises(ValueError, match="not one this service gave out"):
        decode_cursor("bm90LWEtY3Vyc29y")


def test_delete_needs_exactly_one_selector() -> None:
    with pytest.raises(ValueError, match="exactly one of them"):
        DeleteSelector()
    with pytest.raises(ValueError, match="exactly one of them"):
        DeleteSelector(app="xterm", everything=True)
    assert DeleteSelector(app="xterm").describe() == "app"
    assert (
        DeleteSelector(range=TimeRange(NINE, NOW)).describe()
        == "range 2026-12-06T09:00:00Z..2026-12-06T12:00:00Z"
    )


def test_imported_span_refuses_an_end_before_its_start_and_an_unknown_state() -> None:
    with pytest.raises(ValueError, match="ends before it starts"):
        ImportedSpan("k", "focus", NOW, NOW - 1, app="xterm")
    with pytest.raises(ValueError, match="state must be"):
        ImportedSpan("k", "state", NOW, NOW + 1, state="asleep")


def test_iso_utc_keeps_microseconds_only_when_there_are_some() -> None:
    assert iso_utc(NINE) == "2026-12-06T09:00:00Z"
    assert iso_utc(NINE + 0.5) == "2026-12-06T09:00:00.500000Z"


def test_clipped_seconds_counts_only_the_part_inside_the_range() -> None:
    assert clipped_seconds(90.0, 130.0, 100.0, 120.0) == 20.0  # across the whole range
    assert clipped_seconds(90.0, 110.0, 100.0, 120.0) == 10.0  # reaching in from before
    assert clipped_seconds(115.0, 140.0, 100.0, 120.0) == 5.0  # reaching out after
    assert clipped_seconds(10.0, 20.0, 100.0, 120.0) == 0.0  # outside


def _focus(app: str, title: str, start: float, end: float) -> Span:
    return Span(0, SpanKind.FOCUS, SpanData(app=app, title=title, window_id=1), start, end)


def test_summary_clips_each_span_and_sorts_by_time() -> None:
    spans = [
        _focus("xterm", "a", 50.0, 110.0),  # 10 s inside
        _focus("gedit", "notes", 110.0, 150.0),  # 40 s inside
        _focus("xterm", "b", 150.0, 400.0),  # 50 s inside
        Span(0, SpanKind.STATE, SpanData(state="active"), 0.0, 1000.0),
    ]
    by_app = summarize(spans, "app", 100.0, 200.0)
    assert [(row.key, row.seconds) for row in by_app] == [("xterm", 60.0), ("gedit", 40.0)]
    by_title = summarize(spans, "title", 100.0, 200.0)
    assert [(row.key, row.app, row.seconds) for row in by_title] == [
        ("b", "xterm", 50.0),
        ("notes", "gedit", 40.0),
        ("a", "xterm", 10.0),
    ]
    assert [(row.key, row.seconds) for row in summarize(spans, "state", 100.0, 200.0)] == [("active", 100.0)]
