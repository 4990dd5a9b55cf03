"""Activity history as spans: what the sensor saw, merged the way ActivityWatch merges identical
heartbeats. Pure; times are epoch seconds passed in.

Two series are kept apart, each with at most one open span: `state` (active, passive, inactive,
locked) and `focus` (the app, its redacted title, the window). Every observation is a heartbeat of
each series: the data it carries now (None when there is nothing to record: no window has the
focus, or the session is locked) at a time. `SPAN_RULES` decides what a heartbeat does to the open
span, first matching row wins:

| row | open span | gap since last seen | data | does |
| --- | --- | --- | --- | --- |
| heartbeat_older_than_last_seen_is_ignored | yes | backwards | any | nothing (a wall clock stepped back) |
| gap_beyond_pulse_closes_at_last_seen_and_opens | yes | > pulse | present | close at last seen, open at now |
| gap_beyond_pulse_without_data_closes_at_last_seen | yes | > pulse | none | close at last seen |
| same_data_within_pulse_extends | yes | <= pulse | same | extend to now |
| different_data_closes_at_now_and_opens | yes | <= pulse | different | close at now, open at now |
| no_window_or_locked_closes_at_now | yes | <= pulse | none | close at now |
| first_data_opens | no | - | present | open at now |
| nothing_to_record_stays_closed | no | - | none | nothing |

and `stop` (the sensor stopping) closes every open span at its last seen time, so a restart never
extends a span across the time the sensor was down: the new process opens new spans. A span that
would close with no length (closed at the time it opened) is dropped, never written.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

__all__ = [
    "SPAN_RULES",
    "Action",
    "DataSeen",
    "Gap",
    "Span",
    "SpanChange",
    "SpanData",
    "SpanKind",
    "SpanRow",
    "SpanTracker",
    "clipped_seconds",
    "summarize",
]


class SpanKind(enum.Enum):
    FOCUS = "focus"
    STATE = "state"


@dataclass(frozen=True, slots=True)
class SpanData:
    """What a span is of: identical data within the pulse is the same span. For a focus span the
    app, the redacted title, the window and its class; for a state span the state alone."""

    app: str = ""
    title: str = ""
    window_id: int = 0
    wm_class: str = ""
    state: str = ""


@dataclass(frozen=True, slots=True)
class Span:
    """One span; `key` tells the open spans of this process apart (the store gives rows their id)."""

    key: int
    kind: SpanKind
    data: SpanData
    started_at: float
    ended_at: float

    @property
    def seconds(self) -> float:
        return max(0.0, self.ended_at - self.started_at)


class Gap(enum.Enum):
    BACKWARDS = "backwards"
    WITHIN_PULSE = "within_pulse"
    BEYOND_PULSE = "beyond_pulse"
    ANY = "any"


class DataSeen(enum.Enum):
    SAME = "same"
    DIFFERENT = "different"
    NONE = "none"
    PRESENT = "present"  # same or different
    ANY = "any"


class Action(enum.Enum):
    CLOSE_AT_LAST_SEEN = "close_at_last_seen"
    CLOSE_AT_NOW = "close_at_now"
    EXTEND = "extend"
    OPEN = "open"


@dataclass(frozen=True, slots=True)
class SpanRow:
    name: str
    open_span: bool
    gap: Gap
    data: DataSeen
    actions: tuple[Action, ...]


SPAN_RULES: tuple[SpanRow, ...] = (
    SpanRow("heartbeat_older_than_last_seen_is_ignored", True, Gap.BACKWARDS, DataSeen.ANY, ()),
    SpanRow(
        "gap_beyond_pulse_closes_at_last_seen_and_opens",
        True,
        Gap.BEYOND_PULSE,
        DataSeen.PRESENT,
        (Action.CLOSE_AT_LAST_SEEN, Action.OPEN),
    ),
    SpanRow(
        "gap_beyond_pulse_without_data_closes_at_last_seen",
        True,
        Gap.BEYOND_PULSE,
        DataSeen.NONE,
        (Action.CLOSE_AT_LAST_SEEN,),
    ),
    SpanRow("same_data_within_pulse_extends", True, Gap.WITHIN_PULSE, DataSeen.SAME, (Action.EXTEND,)),
    SpanRow(
        "different_data_closes_at_now_and_opens",
        True,
        Gap.WITHIN_PULSE,
        DataSeen.DIFFERENT,
        (Action.CLOSE_AT_NOW, Action.OPEN),
    ),
    SpanRow(
        "no_window_or_locked_closes_at_now", True, Gap.WITHIN_PULSE, DataSeen.NONE, (Action.CLOSE_AT_NOW,)
    ),
    SpanRow("first_data_opens", False, Gap.ANY, DataSeen.PRESENT, (Action.OPEN,)),
    SpanRow("nothing_to_record_stays_closed", False, Gap.ANY, DataSeen.NONE, ()),
)


class SpanChange(enum.Enum):
    OPENED = "opened"
    CLOSED = "closed"
    DROPPED = "dropped"  # closed with no length: nothing to keep


def _gap(open_span: Span | None, at: float, pulse: float) -> Gap:
    if open_span is None:
        return Gap.ANY
    if at < open_span.ended_at:
        return Gap.BACKWARDS
    return Gap.BEYOND_PULSE if at - open_span.ended_at > pulse else Gap.WITHIN_PULSE


def _data_seen(open_span: Span | None, data: SpanData | None) -> DataSeen:
    if data is None:
        return DataSeen.NONE
    if open_span is None:
        return DataSeen.PRESENT
    return DataSeen.SAME if open_span.data == data else DataSeen.DIFFERENT


def _matches(row: SpanRow, is_open: bool, gap: Gap, seen: DataSeen) -> bool:
    if row.open_span is not is_open:
        return False
    if row.gap is not Gap.ANY and row.gap is not gap:
        return False
    if row.data is DataSeen.ANY or row.data is seen:
        return True
    return row.data is DataSeen.PRESENT and seen in (DataSeen.SAME, DataSeen.DIFFERENT)


class SpanTracker:
    """The open span of each series, and what each heartbeat changes (`SPAN_RULES`)."""

    def __init__(self, pulse_secs: float) -> None:
        if pulse_secs <= 0:
            raise ValueError("the pulse must be positive")
        self._pulse = pulse_secs
        self._open: dict[SpanKind, Span] = {}
        self._keys = itertools.count(1)
        self.fired: list[str] = []  # the rows that fired, in order (for tests and the log)

    @property
    def pulse_secs(self) -> float:
        return self._pulse

    def open_spans(self) -> Mapping[SpanKind, Span]:
        return MappingProxyType(dict(self._open))

    def heartbeat(self, kind: SpanKind, data: SpanData | None, at: float) -> list[tuple[SpanChange, Span]]:
        """What `data` seen at `at` does to the open span of the series `kind`."""
        current = self._open.get(kind)
        gap, seen = _gap(current, at, self._pulse), _data_seen(current, data)
        row = next(row for row in SPAN_RULES if _matches(row, current is not None, gap, seen))
        self.fired.append(row.name)
        changes: list[tuple[SpanChange, Span]] = []
        for action in row.actions:
            changes += self._act(action, kind, data, at)
        return changes

    def _act(
        self, action: Action, kind: SpanKind, data: SpanData | None, at: float
    ) -> list[tuple[SpanChange, Span]]:
        current = self._open.get(kind)
        if action is Action.OPEN and data is not None:
            opened = Span(next(self._keys), kind, data, at, at)
            self._open[kind] = opened
            return [(SpanChange.OPENED, opened)]
        if current is None:
            return []
        if action is Action.EXTEND:
            self._open[kind] = replace(current, ended_at=at)
            return []
        end = current.ended_at if action is Action.CLOSE_AT_LAST_SEEN else at
        return [self._close(kind, end)]

    def _close(self, kind: SpanKind, end: float) -> tuple[SpanChange, Span]:
        closed = replace(self._open.pop(kind), ended_at=end)
        return (SpanChange.CLOSED if closed.ended_at > closed.started_at else SpanChange.DROPPED, closed)

    def stop(self) -> list[tuple[SpanChange, Span]]:
        """The sensor stops: every open span closes at its last seen time."""
        return [self._close(kind, self._open[kind].ended_at) for kind in list(self._open)]

    def cut(self, at: float) -> list[tuple[SpanChange, Span]]:
        """Close every open span at `at` (not before its last seen time): before a person's delete,
        so what is deleted is not written back by the open span later."""
        return [self._close(kind, max(at, self._open[kind].ended_at)) for kind in list(self._open)]


# ---- reading spans back --------------------------------------------------------------------------


def clipped_seconds(started_at: float, ended_at: float, since: float, until: float) -> float:
    """The seconds of [started_at, ended_at) that fall inside [since, until)."""
    return max(0.0, min(ended_at, until) - max(started_at, since))


@dataclass(frozen=True, slots=True)
class SummaryRow:
    key: str
    app: str
    seconds: float


SUMMARY_KEYS = ("app", "title", "state")


def _summary_key(span: Span, by: str) -> tuple[str, str] | None:
    if by == "state":
        return (span.data.state, "") if span.kind is SpanKind.STATE else None
    if span.kind is not SpanKind.FOCUS:
        return None
    return (span.data.app, span.data.app) if by == "app" else (span.data.title, span.data.app)


def summarize(spans: Iterable[Span], by: str, since: float, until: float) -> list[SummaryRow]:
    """Time per app, per (title, app) or per state inside [since, until), each span clipped to the
    range; most time first (then by key, so equal times read the same every time)."""
    if by not in SUMMARY_KEYS:
        raise ValueError(f"by must be one of {', '.join(SUMMARY_KEYS)}")
    totals: dict[tuple[str, str], float] = {}
    for span in spans:
        key = _summary_key(span, by)
        seconds = clipped_seconds(span.started_at, span.ended_at, since, until)
        if key is not None and seconds > 0:
            totals[key] = totals.get(key, 0.0) + seconds
    rows = [SummaryRow(key, app, seconds) for (key, app), seconds in totals.items()]
    return sorted(rows, key=lambda row: (-row.seconds, row.key, row.app))
