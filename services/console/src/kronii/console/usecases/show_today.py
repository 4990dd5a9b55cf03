"""Today: the picture of a day (or of the days up to it) and the time per app, per title and per state.

The picture is drawn from the spans of one day (a busy day is one or two pages of the sensor's), the
sums from the sensor's summaries (clipped to the range by the sensor, to the second). A range of
several days draws the state row only: tens of thousands of focus spans would cost the page its speed
and draw no more than the per-app totals beside it say."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo

from kronii.console.core.timeline import (
    ChartRow,
    Span,
    Timeline,
    chart_rows,
    draw_timeline,
    human_duration,
    summarize,
)
from kronii.console.ports import ActivityHistory, ActivitySummary
from kronii.foundation.clock import Clock
from kronii.foundation.errors import InvalidArgument

__all__ = ["MAX_DAYS", "ShowToday", "TodayFrame", "TodayView", "fitted_hours"]

MAX_DAYS = 31
# A day's spans are read at most this many pages deep (5,000 each): the picture of a pathological day
# stops there rather than making the page slow.
_MAX_PAGES = 4


@dataclass(frozen=True)
class TodayFrame:
    """What a Today page is about, known before any data is read: its days and its neighbours."""

    day: date
    days: int
    since: float
    until: float
    is_today: bool
    previous_day: date
    next_day: date | None


@dataclass(frozen=True)
class TodayView:
    day: date
    days: int
    since: float
    until: float
    is_today: bool
    previous_day: date
    next_day: date | None
    timeline: Timeline
    apps: list[ChartRow]
    titles: list[ChartRow]
    states: list[ChartRow]
    focused: str
    active: str
    focus_row_drawn: bool
    truncated: bool


def parse_day(value: str | None, today: date) -> date:
    if not value:
        return today
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise InvalidArgument(f"day must be a date as YYYY-MM-DD, not {value[:40]!r}", field="day") from None


def day_range(day: date, days: int, tz: tzinfo) -> tuple[float, float]:
    """From the first day's local midnight to the midnight after `day`."""
    first = day - timedelta(days=days - 1)
    since = datetime.combine(first, time(0), tz).timestamp()
    until = datetime.combine(day + timedelta(days=1), time(0), tz).timestamp()
    return since, until


def _local_floor(at: float, grain: int, tz: tzinfo) -> float:
    local = datetime.fromtimestamp(at, tz)
    midnight = local.replace(hour=0, minute=0, second=0, microsecond=0)
    into_day = local.hour * 3600 + local.minute * 60 + local.second
    return (
        midnight.replace(hour=0).timestamp() + (into_day // grain) * grain
        if grain < 86400
        else midnight.timestamp()
    )


def fitted_hours(spans: list[Span], since: float, until: float, tz: tzinfo) -> tuple[float, float]:
    """The part of the range that holds its spans, in whole local hours (quarter hours, or five
    minutes, when the person was there for a short while): a day's picture is drawn over the time the
    person was there, not over 24 hours mostly empty. No span: the whole range."""
    inside = [span for span in spans if span.end > since and span.start < until]
    if not inside:
        return since, until
    first = max(min(span.start for span in inside), since)
    last = min(max(span.end for span in inside), until)
    held = last - first
    grain = 3600 if held >= 3 * 3600 else 900 if held >= 45 * 60 else 300
    begin = max(_local_floor(first, grain, tz), since)
    end = _local_floor(last, grain, tz)
    end = end + grain if end < last else end
    return begin, min(max(end, begin + 2 * grain), until)


def _summary(spans: list[Span], since: float, until: float, by: str) -> ActivitySummary:
    rows = summarize(spans, since, until, by)
    return ActivitySummary(by, sum(row.seconds for row in rows), rows)


class ShowToday:
    def __init__(self, history: ActivityHistory, clock: Clock, tz: tzinfo) -> None:
        self._history = history
        self._clock = clock
        self.tz = tz

    def today(self) -> date:
        return datetime.fromtimestamp(self._clock.wall(), self.tz).date()

    def frame(self, day_text: str | None, days: int = 1) -> TodayFrame:
        """The day (or days) asked for; InvalidArgument with a sentence for a bad or future day."""
        if not 1 <= days <= MAX_DAYS:
            raise InvalidArgument(f"days must be between 1 and {MAX_DAYS}", field="days")
        today = self.today()
        day = parse_day(day_text, today)
        if day > today:
            raise InvalidArgument("that day has not happened yet: pick today or an earlier day", field="day")
        since, until = day_range(day, days, self.tz)
        return TodayFrame(
            day=day,
            days=days,
            since=since,
            until=until,
            is_today=day == today,
            previous_day=day - timedelta(days=days),
            next_day=min(day + timedelta(days=days), today) if day < today else None,
        )

    async def view(self, day_text: str | None, days: int = 1) -> TodayView:
        return await self.view_of(self.frame(day_text, days))

    async def view_of(self, frame: TodayFrame) -> TodayView:
        day, days, since, until, today = frame.day, frame.days, frame.since, frame.until, self.today()
        if days == 1:
            # One day's spans are read whole for the picture: its sums are added up from them (the
            # same clipping as the sensor's summary), one call to the sensor instead of four.
            spans, truncated = await self._spans(since, until, "")
            if truncated:  # a day too busy to read whole: its sums from the sensor
                by_app, by_title = await asyncio.gather(
                    self._history.summary(since, until, by="app"),
                    self._history.summary(since, until, by="title"),
                )
            else:
                by_app = _summary(spans, since, until, "app")
                by_title = _summary(spans, since, until, "title")
            return self._assemble(day, days, since, until, spans, truncated, by_app, by_title, today)
        # A range: the state spans for the picture, the sums from the sensor's summaries, which add
        # up tens of thousands of spans where they are kept.
        (spans, truncated), by_app, by_title = await asyncio.gather(
            self._spans(since, until, "state"),
            self._history.summary(since, until, by="app"),
            self._history.summary(since, until, by="title"),
        )
        return self._assemble(day, days, since, until, spans, truncated, by_app, by_title, today)

    async def _spans(self, since: float, until: float, kind: str) -> tuple[list[Span], bool]:
        spans: list[Span] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            page = await self._history.spans(since, until, kind=kind, cursor=cursor)
            spans.extend(page.spans)
            cursor = page.next_cursor
            if cursor is None:
                return spans, False
        return spans, True

    def _assemble(
        self,
        day: date,
        days: int,
        since: float,
        until: float,
        spans: list[Span],
        truncated: bool,
        by_app: ActivitySummary,
        by_title: ActivitySummary,
        today: date,
    ) -> TodayView:
        by_state = _summary(spans, since, until, "state")
        active = sum(row.seconds for row in by_state.rows if row.key == "active")
        return TodayView(
            day=day,
            days=days,
            since=since,
            until=until,
            is_today=day == today,
            previous_day=day - timedelta(days=days),
            next_day=min(day + timedelta(days=days), today) if day < today else None,
            timeline=draw_timeline(spans, *fitted_hours(spans, since, until, self.tz), self.tz),
            apps=chart_rows(by_app.rows),
            titles=chart_rows(by_title.rows),
            states=chart_rows(by_state.rows, kind="state", limit=4),
            focused=human_duration(by_app.total_seconds),
            active=human_duration(active),
            focus_row_drawn=days == 1,
            truncated=truncated,
        )
