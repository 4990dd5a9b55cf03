"""Today's picture, as pure data: the spans of a day (or a range) drawn as two rows of bars (states and
focus), an hours axis, and the time per app or title as chart rows. No I/O; the range, the timezone
and the spans are passed in.

The picture stays the same size however busy the day was: the range is cut into `COLUMNS` columns,
each column takes the key that covered most of it (the app, or the state), and runs of columns with
the same key become one bar. Spans below a column's width merge into their neighbours that way, so
3,000 focus changes or 30 days draw at most COLUMNS bars a row. The sums shown beside the picture
are not read from it: they come from the sensor's summary, to the second."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo

__all__ = [
    "COLUMNS",
    "STATE_FILLS",
    "Bar",
    "ChartRow",
    "Span",
    "SummaryRow",
    "Tick",
    "Timeline",
    "app_fill",
    "chart_rows",
    "draw_timeline",
    "human_duration",
    "summarize",
]

# The picture's width in SVG units (its viewBox); one column per unit.
COLUMNS = 1000
# A column less covered than this share of its width is drawn empty (no data: sensor off, asleep):
# a quarter, so a few seconds of focus in a short picture still show.
_MIN_COVER = 0.25
STATE_FILLS = {
    "active": "#2e9d5b",
    "passive": "#4a7fd0",
    "inactive": "#9a9a9a",
    "locked": "#5a4a6e",
}
_TICK_STEPS_MINUTES = (5, 10, 15, 30, 60, 120, 180, 360, 720, 1440, 2880, 7 * 1440)
_MAX_TICKS = 13


@dataclass(frozen=True)
class Span:
    kind: str  # "focus" | "state"
    start: float  # Unix seconds
    end: float
    app: str | None = None
    title: str | None = None
    state: str | None = None

    @property
    def key(self) -> str:
        if self.kind == "state":
            return self.state or "unknown"
        return self.app or "unknown"


@dataclass(frozen=True)
class SummaryRow:
    key: str
    app: str | None
    seconds: float


@dataclass(frozen=True)
class Bar:
    x: int
    width: int
    key: str
    fill: str
    tooltip: str


@dataclass(frozen=True)
class Tick:
    x: float
    label: str


@dataclass(frozen=True)
class Timeline:
    since: float
    until: float
    state_bars: list[Bar]
    focus_bars: list[Bar]
    ticks: list[Tick]
    legend: list[tuple[str, str]]  # (app, fill) in order of first appearance


@dataclass(frozen=True)
class ChartRow:
    key: str
    app: str | None
    seconds: float
    share: float  # of the largest row, 0..1, for the bar's length
    duration: str
    fill: str


def app_fill(app: str) -> str:
    """A stable colour per app: the same app has the same colour every day and in every chart."""
    digest = hashlib.blake2s(app.encode(), digest_size=2).digest()
    hue = int.from_bytes(digest, "big") % 360
    return f"hsl({hue} 55% 52%)"


def _fill(kind: str, key: str) -> str:
    return STATE_FILLS.get(key, "#777777") if kind == "state" else app_fill(key)


def human_duration(seconds: float) -> str:
    """`2 h 05 min`, `12 min`, `40 s`."""
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min"
    return f"{secs} s"


class _Cover:
    """One key's time in one column: seconds, and where its spans begin and end inside the column."""

    __slots__ = ("first", "key", "last", "seconds")

    def __init__(self, key: str, first: float, last: float) -> None:
        self.key = key
        self.seconds = 0.0
        self.first = first
        self.last = last


def _add(column: dict[str, _Cover], key: str, begin: float, finish: float) -> None:
    cover = column.get(key)
    if cover is None:
        cover = column[key] = _Cover(key, begin, finish)
    cover.seconds += finish - begin
    if begin < cover.first:
        cover.first = begin
    if finish > cover.last:
        cover.last = finish


def _column_cover(spans: Iterable[Span], since: float, until: float) -> list[dict[str, _Cover]]:
    """Each key's time in each column. Most spans of a busy day fall in one column: that case is one
    addition, not a loop (a busy day is thousands of them)."""
    width = (until - since) / COLUMNS
    columns: list[dict[str, _Cover]] = [{} for _ in range(COLUMNS)]
    for span in spans:
        start = span.start if span.start > since else since
        end = span.end if span.end < until else until
        if end <= start:
            continue
        key = span.key
        first = int((start - since) / width)
        last = min(int((end - since) / width), COLUMNS - 1)
        if first == last:
            _add(columns[first], key, start, end)
            continue
        for column in range(first, last + 1):
            left = since + column * width
            begin, finish = max(start, left), min(end, left + width)
            if finish > begin:
                _add(columns[column], key, begin, finish)
    return columns


def _dominant(columns: list[dict[str, _Cover]], column_secs: float) -> list[_Cover | None]:
    """The cover of the key that had most of each column (None: too little of anything)."""
    keys: list[_Cover | None] = []
    for cover in columns:
        total = sum(item.seconds for item in cover.values())
        if not cover or total < _MIN_COVER * column_secs:
            keys.append(None)
            continue
        keys.append(max(cover.values(), key=lambda item: (item.seconds, item.key)))
    return keys


def _run_tooltip(key: str, run: list[_Cover], edges: list[_Cover | None], tz: tzinfo) -> str:
    """What a bar says: its key from where its first span begins to where its last one ends (the
    columns on either side may hold their edges), and the seconds the key really had."""
    covers = run + [cover for cover in edges if cover is not None]
    begin = min(cover.first for cover in covers)
    end = max(cover.last for cover in covers)
    seconds = sum(cover.seconds for cover in covers)
    return f"{key}: {_clock(begin, tz)} to {_clock(end, tz)} ({human_duration(seconds)})"


def _bars(kind: str, spans: Sequence[Span], since: float, until: float, tz: tzinfo) -> list[Bar]:
    columns = _column_cover(spans, since, until)
    covers = _dominant(columns, (until - since) / COLUMNS)
    names = [cover.key if cover is not None else None for cover in covers]
    bars: list[Bar] = []
    start = 0
    for column in range(1, COLUMNS + 1):
        if column < COLUMNS and names[column] == names[start]:
            continue
        key = names[start]
        if key is not None:
            run = [cover for cover in covers[start:column] if cover is not None]
            edges = [columns[at].get(key) for at in (start - 1, column) if 0 <= at < COLUMNS]
            bars.append(Bar(start, column - start, key, _fill(kind, key), _run_tooltip(key, run, edges, tz)))
        start = column
    return bars


def _clock(at: float, tz: tzinfo) -> str:
    return datetime.fromtimestamp(at, tz).strftime("%H:%M")


def _tick(at: datetime, since: float, until: float, label: str) -> Tick:
    return Tick(round((at.timestamp() - since) / (until - since) * COLUMNS, 1), label)


def _ticks(since: float, until: float, tz: tzinfo) -> list[Tick]:
    """Marks on whole minutes, hours or midnights of the person's timezone, at most _MAX_TICKS."""
    minutes = (until - since) / 60
    step = next((m for m in _TICK_STEPS_MINUTES if minutes / m <= _MAX_TICKS - 1), _TICK_STEPS_MINUTES[-1])
    at = datetime.fromtimestamp(since, tz).replace(minute=0, second=0, microsecond=0)
    if step >= 1440:
        at = at.replace(hour=0)
    ticks: list[Tick] = []
    index = 0
    while (stamp := at.timestamp()) < until:
        if step < 60:
            wanted = at.minute % step == 0
        elif step < 1440:
            wanted = at.minute == 0 and at.hour % (step // 60) == 0
        else:
            wanted = index % (step // 1440) == 0
        if stamp >= since and wanted:
            ticks.append(_tick(at, since, until, at.strftime("%H:%M" if step < 1440 else "%d %b")))
        if step < 1440:
            # Real time, so a DST change neither repeats nor skips a mark.
            at = (at.astimezone(UTC) + timedelta(minutes=min(step, 60))).astimezone(tz)
        else:
            at = at + timedelta(days=1)  # the next local midnight (aware arithmetic keeps the wall time)
            index += 1
    return ticks


def draw_timeline(spans: Sequence[Span], since: float, until: float, tz: tzinfo) -> Timeline:
    """The two rows of bars and the axis for `spans` between `since` and `until`."""
    if until <= since:
        raise ValueError("the range must end after it starts")
    states = [span for span in spans if span.kind == "state"]
    focus = [span for span in spans if span.kind == "focus"]
    focus_bars = _bars("focus", focus, since, until, tz)
    legend: dict[str, str] = {}
    for bar in focus_bars:
        legend.setdefault(bar.key, bar.fill)
    return Timeline(
        since=since,
        until=until,
        state_bars=_bars("state", states, since, until, tz),
        focus_bars=focus_bars,
        ticks=_ticks(since, until, tz),
        legend=list(legend.items()),
    )


def summarize(spans: Iterable[Span], since: float, until: float, by: str) -> list[SummaryRow]:
    """Seconds per app, per title (with its app) or per state inside [since, until), each span clipped
    to the range, most first: the sensor's summary, for spans already read."""
    kind = "state" if by == "state" else "focus"
    sums: dict[tuple[str, str | None], float] = {}
    for span in spans:
        if span.kind != kind:
            continue
        seconds = min(span.end, until) - max(span.start, since)
        if seconds <= 0:
            continue
        if by == "state":
            group: tuple[str, str | None] = (span.state or "", None)
        elif by == "title":
            group = (span.title or "", span.app)
        else:
            group = (span.app or "", span.app)
        sums[group] = sums.get(group, 0.0) + seconds
    rows = [SummaryRow(key, app, seconds) for (key, app), seconds in sums.items()]
    return sorted(rows, key=lambda row: (-row.seconds, row.key))


def chart_rows(rows: Sequence[SummaryRow], *, kind: str = "focus", limit: int = 15) -> list[ChartRow]:
    """The largest `limit` rows as bars scaled to the largest; the rest summed as one `other` row."""
    ordered = sorted(rows, key=lambda row: (-row.seconds, row.key))
    shown, rest = ordered[:limit], ordered[limit:]
    if rest:
        shown.append(SummaryRow("other", None, sum(row.seconds for row in rest)))
    largest = max((row.seconds for row in shown), default=0.0) or 1.0
    return [
        ChartRow(
            key=row.key,
            app=row.app,
            seconds=row.seconds,
            share=row.seconds / largest,
            duration=human_duration(row.seconds),
            fill=_fill(kind, row.app or row.key) if row.key != "other" else "#888888",
        )
        for row in shown
    ]
