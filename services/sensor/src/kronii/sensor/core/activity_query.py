"""The questions asked of the activity history, checked: a time range, the page cursor, what to
delete, and the spans an import brings. Pure; `now` is passed in. Every refusal is a ValueError
whose text is a sentence for the caller."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from datetime import UTC, datetime

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "MAX_RANGE_DAYS",
    "Cursor",
    "DeleteSelector",
    "ImportedSpan",
    "SpanRecord",
    "TimeRange",
    "decode_cursor",
    "encode_cursor",
    "iso_utc",
    "parse_instant",
    "parse_range",
]

MAX_RANGE_DAYS = 400
DEFAULT_LIMIT = 500
MAX_LIMIT = 5000
_DAY = 86400.0
# Times the history takes: none before the epoch, and a margin below datetime's year 9999 for offsets.
_EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
_LATEST = datetime(9998, 12, 31, tzinfo=UTC)
_MAX_ROW_ID = 2**63 - 1


def parse_instant(text: str, name: str) -> float:
    """An ISO-8601 date-time as epoch seconds; one without an offset is UTC."""
    try:
        at = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(f"{name} {text!r} is not an ISO-8601 date and time (2026-12-06T09:00:00Z)") from None
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    if not _EARLIEST <= at <= _LATEST:
        raise ValueError(f"{name} {text!r} is out of range (1970 to 9998)")
    return at.timestamp()


def iso_utc(at: float) -> str:
    """Epoch seconds as ISO-8601 UTC with a Z, to the microsecond when there is one."""
    stamp = datetime.fromtimestamp(at, UTC)
    spec = "microseconds" if stamp.microsecond else "seconds"
    return stamp.isoformat(timespec=spec).replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class TimeRange:
    since: float
    until: float


def parse_range(since: str | None, until: str | None, now: float, *, default_days: float = 1.0) -> TimeRange:
    """[since, until) from the query: until defaults to now, since to `default_days` before until.
    Refused: a value that is not ISO-8601, until not after since, a range over MAX_RANGE_DAYS."""
    end = parse_instant(until, "until") if until else now
    start = parse_instant(since, "since") if since else end - default_days * _DAY
    if end <= start:
        raise ValueError(f"until ({iso_utc(end)}) must be after since ({iso_utc(start)})")
    if end - start > MAX_RANGE_DAYS * _DAY:
        raise ValueError(f"the range from since to until is longer than {MAX_RANGE_DAYS} days")
    return TimeRange(start, end)


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where the next page starts: after the span that started at `started_at` with row `span_id`."""

    started_at: float
    span_id: int


def encode_cursor(cursor: Cursor) -> str:
    raw = f"{round(cursor.started_at * 1_000_000)}:{cursor.span_id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(text: str) -> Cursor:
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
        micros, span_id = (int(part) for part in raw.split(":"))
        if not 0 <= micros <= _LATEST.timestamp() * 1_000_000 or not 0 <= span_id <= _MAX_ROW_ID:
            raise ValueError("out of range")
        return Cursor(micros / 1_000_000, span_id)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise ValueError("the cursor is not one this service gave out (use next_cursor as it came)") from None


@dataclass(frozen=True, slots=True)
class DeleteSelector:
    """What a person deletes: a range, one app, or everything (exactly one of them)."""

    range: TimeRange | None = None
    app: str | None = None
    everything: bool = False

    def __post_init__(self) -> None:
        chosen = sum((self.range is not None, self.app is not None, self.everything))
        if chosen != 1:
            raise ValueError(
                "say what to delete: since and until (a range), app (one app) or all=true (everything), "
                "exactly one of them"
            )
        if self.app is not None and not self.app.strip():
            raise ValueError("app must name an app")

    def describe(self) -> str:
        """For the audit row: never a title, an app only as the person named it."""
        if self.range is not None:
            return f"range {iso_utc(self.range.since)}..{iso_utc(self.range.until)}"
        return "all" if self.everything else "app"


@dataclass(frozen=True, slots=True)
class ImportedSpan:
    """A span brought in from another tool (ActivityWatch); `key` makes importing it twice a no-op."""

    key: str
    kind: str
    started_at: float
    ended_at: float
    app: str = ""
    title: str = ""
    wm_class: str = ""
    state: str = ""

    def __post_init__(self) -> None:
        if any("\x00" in text for text in (self.key, self.app, self.title, self.wm_class, self.state)):
            raise ValueError(f"span {self.key[:40]!r} holds a NUL character, which cannot be kept")
        if self.kind not in ("focus", "state"):
            raise ValueError(f"kind must be focus or state, not {self.kind!r}")
        if not self.key or len(self.key) > 200:
            raise ValueError("each imported span needs a key of 1 to 200 characters")
        if self.ended_at <= self.started_at:
            raise ValueError(f"span {self.key!r} ends before it starts")
        if self.kind == "state" and self.state not in ("active", "passive", "inactive", "locked"):
            raise ValueError(f"span {self.key!r}: state must be active, passive, inactive or locked")
        if self.kind == "focus" and not self.app:
            raise ValueError(f"span {self.key!r}: a focus span needs its app")


@dataclass(frozen=True, slots=True)
class SpanRecord:
    """A span as the history answers it: its row id (0 for none yet), kind, what it is of, and its
    times; `open` when it is the span the sensor is still extending (its end is now)."""

    span_id: int
    kind: str
    started_at: float
    ended_at: float
    app: str = ""
    title: str = ""
    window_id: int = 0
    wm_class: str = ""
    state: str = ""
    open: bool = False
