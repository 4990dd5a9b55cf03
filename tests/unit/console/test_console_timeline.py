"""Today's picture as pure data (core/timeline.py): columns take the key that covered most of them,
runs of one key are one bar, gaps stay empty, the axis marks whole local hours, and a busy day or a
month draws no more bars than the picture has columns."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from kronii.console.core.timeline import (
    COLUMNS,
    Span,
    SummaryRow,
    app_fill,
    chart_rows,
    draw_timeline,
    human_duration,
)

PARIS = ZoneInfo("Europe/Paris")
DAY = datetime(2026, 12, 6, tzinfo=PARIS).timestamp()
HOUR = 3600.0


def focus(app: str, start: float, secs: float) -> Span:
    return Span("focus", start, start + secs, app=app, title=f"{app} window")


def test_two_apps_focused_in_turn_are_two_bars_where_they_were() -> None:
    spans = [focus("xterm", DAY + 9 * HOUR, HOUR), focus("firefox", DAY + 10 * HOUR, 2 * HOUR)]
    timeline = draw_timeline(spans, DAY, DAY + 24 * HOUR, PARIS)
    assert [(bar.key, bar.x, bar.width) for bar in timeline.focus_bars] == [
        ("xterm", 375, 42),
        ("firefox", 417, 83),
    ]
    assert timeline.focus_bars[0].tooltip == "xterm: 09:00 to 10:00 (1 h 00 min)"
    assert timeline.legend == [("xterm", app_fill("xterm")), ("firefox", app_fill("firefox"))]


def test_time_without_any_span_stays_empty() -> None:
    timeline = draw_timeline([focus("xterm", DAY, HOUR)], DAY, DAY + 24 * HOUR, PARIS)
    assert sum(bar.width for bar in timeline.focus_bars) == 42


def test_spans_below_a_column_merge_into_the_app_that_covered_most_of_it() -> None:
    # 3 s of vim in every 30 s of xterm: vim never wins a column of 86.4 s.
    spans = []
    for i in range(2000):
        spans.append(focus("xterm", DAY + i * 30, 27))
        spans.append(focus("vim", DAY + i * 30 + 27, 3))
    timeline = draw_timeline(spans, DAY, DAY + 24 * HOUR, PARIS)
    assert [bar.key for bar in timeline.focus_bars] == ["xterm"]


def test_a_busy_day_and_a_month_draw_at_most_one_bar_per_column() -> None:
    apps = [f"app{n}" for n in range(7)]
    spans = [focus(apps[i % 7], DAY + i * 9.6, 9) for i in range(3000)]
    day = draw_timeline(spans, DAY, DAY + 24 * HOUR, PARIS)
    month = draw_timeline(spans, DAY - 29 * 24 * HOUR, DAY + 24 * HOUR, PARIS)
    assert 0 < len(day.focus_bars) <= COLUMNS
    assert 0 < len(month.focus_bars) <= COLUMNS
    assert sum(bar.width for bar in day.focus_bars) == pytest.approx(3000 * 9.6 / 86.4, abs=2)


def test_states_and_focus_are_separate_rows_with_state_colours() -> None:
    spans = [Span("state", DAY, DAY + 12 * HOUR, state="active"), focus("xterm", DAY, HOUR)]
    timeline = draw_timeline(spans, DAY, DAY + 24 * HOUR, PARIS)
    assert [(bar.key, bar.width) for bar in timeline.state_bars] == [("active", 500)]
    assert [bar.key for bar in timeline.focus_bars] == ["xterm"]
    assert timeline.state_bars[0].fill != timeline.focus_bars[0].fill


def test_the_axis_marks_whole_hours_of_the_persons_zone() -> None:
    timeline = draw_timeline([], DAY, DAY + 24 * HOUR, PARIS)
    assert [tick.label for tick in timeline.ticks] == [f"{h:02d}:00" for h in range(0, 24, 2)]
    assert timeline.ticks[1].x == pytest.approx(2 / 24 * COLUMNS, abs=0.1)


def test_a_day_that_changes_to_summer_time_keeps_its_marks_on_the_hour() -> None:
    start = datetime(2026, 3, 29, tzinfo=PARIS).timestamp()
    end = datetime(2026, 3, 30, tzinfo=PARIS).timestamp()
    labels = [tick.label for tick in draw_timeline([], start, end, PARIS).ticks]
    assert labels[0] == "00:00" and all(label.endswith(":00") for label in labels)
    assert "02:00" not in labels  # 02:00 does not exist that night


def test_a_short_picture_is_marked_every_few_minutes() -> None:
    timeline = draw_timeline([], DAY + 9 * HOUR, DAY + 9 * HOUR + 1200, PARIS)
    assert [tick.label for tick in timeline.ticks] == ["09:00", "09:05", "09:10", "09:15"]


def test_a_month_is_marked_by_days() -> None:
    timeline = draw_timeline([], DAY - 29 * 24 * HOUR, DAY + 24 * HOUR, PARIS)
    assert all(len(tick.label.split()) == 2 for tick in timeline.ticks)
    assert 3 <= len(timeline.ticks) <= 13


def test_an_empty_range_is_refused() -> None:
    with pytest.raises(ValueError, match="end after"):
        draw_timeline([], DAY, DAY, UTC)


def test_chart_rows_keep_the_largest_and_sum_the_rest_as_other() -> None:
    rows = [SummaryRow(f"t{n}", "xterm", float(100 - n)) for n in range(20)]
    chart = chart_rows(rows, limit=3)
    assert [row.key for row in chart] == ["t0", "t1", "t2", "other"]
    assert chart[-1].seconds == sum(100 - n for n in range(3, 20))
    assert chart[-1].share == 1.0  # the bars are scaled to the largest row, "other" included
    assert chart[0].share == pytest.approx(100 / chart[-1].seconds)


@pytest.mark.parametrize(
    ("seconds", "text"), [(40, "40 s"), (59.6, "1 min"), (720, "12 min"), (7500, "2 h 05 min")]
)
def test_durations_read_as_a_person_says_them(seconds: float, text: str) -> None:
    assert human_duration(seconds) == text


def test_an_app_has_the_same_colour_every_time() -> None:
    assert app_fill("xterm") == app_fill("xterm") != app_fill("firefox")
