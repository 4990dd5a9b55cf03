"""ActivityWatch's export read as kronii spans (kronii.sensor.core.aw_export), and the times
`kronii activity` takes (--since, --day) and prints."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import click
import pytest
from kronii.sensor.cli.activity import human_duration, local_day, resolve_since, resolve_until
from kronii.sensor.core.aw_export import AwSummary, read_aw_export


def _export() -> dict[str, Any]:
    window = [
        {
            "timestamp": "2026-12-06T21:10:04.917000+00:00",
            "duration": 11.011,
            "data": {"app": "XTerm", "title": "notes"},
        },
        {
            "id": 7,
            "timestamp": "2026-12-06T21:10:16.930000+00:00",
            "duration": 7.0,
            "data": {"app": "Xmessage", "title": "x"},
        },
        {
            "timestamp": "2026-12-06T21:10:30+00:00",
            "duration": 0.0,
            "data": {"app": "XTerm", "title": "blink"},
        },
    ]
    afk = [
        {"timestamp": "2026-12-06T21:07:46.596000+00:00", "duration": 64.132, "data": {"status": "not-afk"}},
        {"timestamp": "2026-12-06T21:08:50.729000+00:00", "duration": 34.0, "data": {"status": "afk"}},
    ]
    return {
        "buckets": {
            "aw-watcher-window_vm": {"type": "currentwindow", "events": window},
            "aw-watcher-afk_vm": {"type": "afkstatus", "events": afk},
            "aw-watcher-web-firefox": {"type": "web.tab.current", "events": [{"timestamp": "x"}]},
        }
    }


def test_window_events_become_focus_spans_with_their_app_title_and_end() -> None:
    spans = [span for span in read_aw_export(_export()) if span.kind == "focus"]
    assert [(span.app, span.title) for span in spans] == [("XTerm", "notes"), ("Xmessage", "x")]
    assert spans[0].start == "2026-12-06T21:10:04.917000+00:00"
    assert spans[0].end == "2026-12-06T21:10:15.928000+00:00"


def test_afk_events_become_state_spans_active_and_inactive() -> None:
    states = [(span.state, span.start) for span in read_aw_export(_export()) if span.kind == "state"]
    assert states == [
        ("active", "2026-12-06T21:07:46.596000+00:00"),
        ("inactive", "2026-12-06T21:08:50.729000+00:00"),
    ]


def test_keys_name_the_bucket_and_the_event_id_or_start_so_a_second_read_gives_the_same_keys() -> None:
    keys = [span.key for span in read_aw_export(_export())]
    assert keys == [span.key for span in read_aw_export(_export())]
    assert "aw:aw-watcher-window_vm:7" in keys
    assert "aw:aw-watcher-window_vm:2026-12-06T21:10:04.917000+00:00" in keys
    assert len(set(keys)) == len(keys)


def test_other_buckets_and_events_without_duration_are_counted_and_left_out() -> None:
    summary = AwSummary()
    spans = list(read_aw_export(_export(), summary))
    assert len(spans) == 4
    assert summary.buckets_skipped == ["aw-watcher-web-firefox"]
    assert summary.events_skipped == 1


def test_a_file_that_is_not_an_export_is_refused_with_a_sentence() -> None:
    with pytest.raises(ValueError, match='no "buckets" object'):
        list(read_aw_export([1, 2]))
    broken = {"buckets": {"w": {"type": "currentwindow", "events": [{"duration": 1}]}}}
    with pytest.raises(ValueError, match="bucket w event 0 is not an ActivityWatch event"):
        list(read_aw_export(broken))


NOW = datetime(2026, 12, 6, 15, 30, tzinfo=UTC)


def test_since_reads_words_spans_back_days_and_times() -> None:
    assert resolve_since("7d", NOW) == NOW - timedelta(days=7)
    assert resolve_since("90m", NOW) == NOW - timedelta(minutes=90)
    assert resolve_since("2026-12-06T09:00:00Z", NOW) == datetime(2026, 12, 6, 9, tzinfo=UTC)
    today = resolve_since("today", NOW)
    assert (today.hour, today.minute, today.date()) == (0, 0, NOW.astimezone().date())
    assert (
        resolve_since("yesterday", NOW)
        == local_day((NOW.astimezone().date() - timedelta(days=1)).isoformat())[0]
    )


def test_until_of_yesterday_is_the_end_of_that_day() -> None:
    assert resolve_until(None, "yesterday", NOW) == resolve_since("today", NOW)
    assert resolve_until(None, "7d", NOW) == NOW


def test_a_day_is_local_midnight_to_midnight_and_a_bad_one_is_refused() -> None:
    start, end = local_day("2026-03-29")
    assert (start.hour, end.hour, end.date().isoformat()) == (0, 0, "2026-03-30")
    with pytest.raises(click.BadParameter, match="is not a day"):
        local_day("29/03/2026")
    with pytest.raises(click.BadParameter, match="is not a time"):
        resolve_since("last week", NOW)


def test_durations_read_as_a_person_says_them() -> None:
    assert [human_duration(s) for s in (45, 750, 7500)] == ["45s", "12m 30s", "2h 05m"]
