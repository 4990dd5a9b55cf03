"""The span merge rules (kronii.sensor.core.spans.SPAN_RULES): one test per row of the table, named
after the row, each checking that the row fired and what it did to the spans; then the rules that
cut across the rows (zero-length spans, a stop and a restart, the two series kept apart)."""

from __future__ import annotations

import pytest
from kronii.sensor.core.spans import SPAN_RULES, Span, SpanChange, SpanData, SpanKind, SpanTracker

PULSE = 10.0
XTERM = SpanData(app="xterm", title="~", window_id=11, wm_class="xterm.XTerm")
EDITOR = SpanData(app="gedit", title="notes", window_id=12, wm_class="gedit.Gedit")


def _tracker_with_focus_open(start: float = 100.0, last_seen: float = 105.0) -> SpanTracker:
    tracker = SpanTracker(PULSE)
    tracker.heartbeat(SpanKind.FOCUS, XTERM, start)
    tracker.heartbeat(SpanKind.FOCUS, XTERM, last_seen)
    return tracker


def _closed(changes: list[tuple[SpanChange, Span]]) -> list[tuple[SpanData, float, float]]:
    return [
        (span.data, span.started_at, span.ended_at) for change, span in changes if change is SpanChange.CLOSED
    ]


def _opened(changes: list[tuple[SpanChange, Span]]) -> list[tuple[SpanData, float]]:
    return [(span.data, span.started_at) for change, span in changes if change is SpanChange.OPENED]


def test_the_table_has_a_test_for_every_row() -> None:
    tested = {name.removeprefix("test_") for name in globals() if name.startswith("test_")}
    assert {row.name for row in SPAN_RULES} <= tested


def test_heartbeat_older_than_last_seen_is_ignored() -> None:
    tracker = _tracker_with_focus_open(100.0, 105.0)
    changes = tracker.heartbeat(SpanKind.FOCUS, EDITOR, 103.0)
    assert tracker.fired[-1] == "heartbeat_older_than_last_seen_is_ignored"
    assert changes == []
    assert tracker.open_spans()[SpanKind.FOCUS].data == XTERM
    assert tracker.open_spans()[SpanKind.FOCUS].ended_at == 105.0


def test_gap_beyond_pulse_closes_at_last_seen_and_opens() -> None:
    tracker = _tracker_with_focus_open(100.0, 105.0)
    changes = tracker.heartbeat(SpanKind.FOCUS, XTERM, 105.0 + PULSE + 0.5)  # the machine slept
    assert tracker.fired[-1] == "gap_beyond_pulse_closes_at_last_seen_and_opens"
    assert _closed(changes) == [(XTERM, 100.0, 105.0)]
    assert _opened(changes) == [(XTERM, 115.5)]


def test_gap_beyond_pulse_without_data_closes_at_last_seen() -> None:
    tracker = _tracker_with_focus_open(100.0, 105.0)
    changes = tracker.heartbeat(SpanKind.FOCUS, None, 200.0)
    assert tracker.fired[-1] == "gap_beyond_pulse_without_data_closes_at_last_seen"
    assert _closed(changes) == [(XTERM, 100.0, 105.0)]
    assert SpanKind.FOCUS not in tracker.open_spans()


def test_same_data_within_pulse_extends() -> None:
    tracker = _tracker_with_focus_open(100.0, 105.0)
    changes = tracker.heartbeat(SpanKind.FOCUS, XTERM, 105.0 + PULSE)  # exactly the pulse: still the same
    assert tracker.fired[-1] == "same_data_within_pulse_extends"
    assert changes == []
    span = tracker.open_spans()[SpanKind.FOCUS]
    assert (span.started_at, span.ended_at) == (100.0, 115.0)


def test_different_data_closes_at_now_and_opens() -> None:
    tracker = _tracker_with_focus_open(100.0, 105.0)
    changes = tracker.heartbeat(SpanKind.FOCUS, EDITOR, 108.0)
    assert tracker.fired[-1] == "different_data_closes_at_now_and_opens"
    assert _closed(changes) == [(XTERM, 100.0, 108.0)]
    assert _opened(changes) == [(EDITOR, 108.0)]


def test_a_new_title_is_different_data() -> None:
    tracker = _tracker_with_focus_open(100.0, 105.0)
    retitled = SpanData(app="xterm", title="~/src", window_id=11, wm_class="xterm.XTerm")
    changes = tracker.heartbeat(SpanKind.FOCUS, retitled, 106.0)
    assert _closed(changes) == [(XTERM, 100.0, 106.0)]
    assert _opened(changes) == [(retitled, 106.0)]


def test_no_window_or_locked_closes_at_now() -> None:
    tracker = _tracker_with_focus_open(100.0, 105.0)
    changes = tracker.heartbeat(SpanKind.FOCUS, None, 107.0)
    assert tracker.fired[-1] == "no_window_or_locked_closes_at_now"
    assert _closed(changes) == [(XTERM, 100.0, 107.0)]
    assert SpanKind.FOCUS not in tracker.open_spans()


def test_first_data_opens() -> None:
    tracker = SpanTracker(PULSE)
    changes = tracker.heartbeat(SpanKind.STATE, SpanData(state="active"), 50.0)
    assert tracker.fired[-1] == "first_data_opens"
    assert _opened(changes) == [(SpanData(state="active"), 50.0)]


def test_nothing_to_record_stays_closed() -> None:
    tracker = SpanTracker(PULSE)
    changes = tracker.heartbeat(SpanKind.FOCUS, None, 50.0)
    assert tracker.fired[-1] == "nothing_to_record_stays_closed"
    assert changes == []
    assert tracker.open_spans() == {}


def test_zero_length_span_is_dropped_not_closed() -> None:
    tracker = SpanTracker(PULSE)
    tracker.heartbeat(SpanKind.FOCUS, XTERM, 100.0)
    changes = tracker.heartbeat(SpanKind.FOCUS, EDITOR, 100.0)  # two windows within one instant
    assert [change for change, _ in changes] == [SpanChange.DROPPED, SpanChange.OPENED]
    assert _closed(changes) == []


def test_stop_closes_at_last_seen_and_a_restart_does_not_extend_across_the_downtime() -> None:
    tracker = _tracker_with_focus_open(100.0, 105.0)
    assert _closed(tracker.stop()) == [(XTERM, 100.0, 105.0)]
    # The new process sees the same window two seconds later, within the pulse: a new span all
    # the same, since the old one is closed and the time between is not the person's.
    restarted = SpanTracker(PULSE)
    changes = restarted.heartbeat(SpanKind.FOCUS, XTERM, 107.0)
    assert _opened(changes) == [(XTERM, 107.0)]


def test_stop_of_a_span_seen_once_drops_it() -> None:
    tracker = SpanTracker(PULSE)
    tracker.heartbeat(SpanKind.FOCUS, XTERM, 100.0)
    assert [change for change, _ in tracker.stop()] == [SpanChange.DROPPED]


def test_state_and_focus_are_separate_series() -> None:
    tracker = SpanTracker(PULSE)
    tracker.heartbeat(SpanKind.STATE, SpanData(state="active"), 100.0)
    tracker.heartbeat(SpanKind.FOCUS, XTERM, 100.0)
    changes = tracker.heartbeat(SpanKind.STATE, SpanData(state="passive"), 130.0 - 25.0)
    assert _closed(changes) == [(SpanData(state="active"), 100.0, 105.0)]
    focus = tracker.open_spans()[SpanKind.FOCUS]
    assert (focus.data, focus.started_at) == (XTERM, 100.0)


def test_cut_closes_open_spans_now_for_a_delete() -> None:
    tracker = _tracker_with_focus_open(100.0, 105.0)
    assert _closed(tracker.cut(106.0)) == [(XTERM, 100.0, 106.0)]
    assert tracker.open_spans() == {}


def test_a_pulse_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        SpanTracker(0)
