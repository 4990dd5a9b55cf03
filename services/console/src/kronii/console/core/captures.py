"""The Captures page as pure data: a stored redacted frame, a day's range in the person's timezone,
the day's frames grouped by hour for the timeline of thumbnails, and what a delete removed.
No I/O; times are Unix seconds, the timezone is passed in."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo

from kronii.foundation.errors import InvalidArgument

__all__ = [
    "FRAME_ID",
    "Forgotten",
    "Frame",
    "FrameUsage",
    "HourOfFrames",
    "day_range",
    "frame_id",
    "frame_time",
    "frames_by_hour",
    "human_bytes",
    "parse_day",
    "required_day",
]

# The capture vault's object ids: only this shape goes into a path or a request.
FRAME_ID = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
# What the redaction levels mean to a person (the capture service's names).
LEVEL_WORDS = {
    "green": "nothing sensitive found",
    "amber": "some text masked",
    "red": "not allowed to leave the machine, even masked",
}


@dataclass(frozen=True)
class Frame:
    """One stored REDACTED screenshot, as the capture service lists it (never its pixels)."""

    screenshot_id: str
    created_at: float
    app: str
    width: int
    height: int
    redaction_level: str
    masked_fraction: float
    size_bytes: int

    @property
    def level_words(self) -> str:
        return LEVEL_WORDS.get(self.redaction_level, self.redaction_level or "not graded")


@dataclass(frozen=True)
class FrameUsage:
    """What the capture vault holds (live objects, sealed bytes) and how long it keeps them (days;
    raw 0: no raw frame is kept)."""

    redacted_objects: int
    redacted_bytes: int
    raw_objects: int
    raw_bytes: int
    raw_days: int
    redacted_days: int


@dataclass(frozen=True)
class HourOfFrames:
    label: str  # "09:00"
    frames: tuple[Frame, ...]


@dataclass(frozen=True)
class Forgotten:
    """What a delete of frames removed: rows and files (files_kept could not be removed)."""

    deleted: int
    files_removed: int
    files_missing: int = 0
    files_kept: int = 0

    def sentence(self) -> str:
        if self.deleted == 0:
            return "There was nothing to delete."
        frames = "frame" if self.deleted == 1 else "frames"
        said = f"Deleted {self.deleted} {frames} ({self.files_removed} files removed from disk)"
        if self.files_kept:
            said += f"; {self.files_kept} files could not be removed and are kept for the next try"
        return said + "."


def frame_id(value: str) -> str:
    value = value.strip()
    if not FRAME_ID.fullmatch(value):
        raise InvalidArgument("that is not a frame id")
    return value


def parse_day(text: str | None, today: date) -> date:
    """YYYY-MM-DD, or today when empty; InvalidArgument with a sentence otherwise."""
    if not text:
        return today
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise InvalidArgument("a day is written YYYY-MM-DD, e.g. 2026-12-06") from None


def required_day(text: str) -> date:
    """A day the person named (a delete never defaults to today)."""
    if not text.strip():
        raise InvalidArgument("name the day (YYYY-MM-DD)")
    return parse_day(text, date.min)


def day_range(day: date, tz: tzinfo) -> tuple[float, float]:
    """The day's start and the next day's start in `tz`, as Unix seconds (23 or 25 hours on the days
    the clocks change)."""
    start = datetime.combine(day, time(0), tzinfo=tz)
    end = datetime.combine(day + timedelta(days=1), time(0), tzinfo=tz)
    return start.timestamp(), end.timestamp()


def frames_by_hour(frames: Sequence[Frame], tz: tzinfo) -> list[HourOfFrames]:
    """The frames in time order, grouped by the local hour they were taken in (hours without a frame
    are left out)."""
    groups: dict[str, list[Frame]] = {}
    for frame in sorted(frames, key=lambda f: (f.created_at, f.screenshot_id)):
        hour = datetime.fromtimestamp(frame.created_at, tz).strftime("%H:00")
        groups.setdefault(hour, []).append(frame)
    return [HourOfFrames(label, tuple(items)) for label, items in groups.items()]


def frame_time(at: float, tz: tzinfo) -> str:
    return datetime.fromtimestamp(at, tz).strftime("%H:%M:%S")


def human_bytes(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"
