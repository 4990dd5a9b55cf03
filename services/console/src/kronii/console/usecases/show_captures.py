"""The Captures page: a day's stored redacted frames as a timeline of thumbnails grouped by hour
(app, time, redaction level), a thumbnail (downscaled from the redacted frame by the capture
service), and a full frame, which the capture service gives only with the person's proof of
presence, as for `kronii capture get`: without it, its refusal sentence is what the page shows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, tzinfo

from kronii.console.core.captures import Frame, HourOfFrames, day_range, frame_id, frames_by_hour, parse_day
from kronii.console.ports import CaptureFrames
from kronii.foundation.audit_trail import AuditTrail
from kronii.foundation.clock import Clock
from kronii.foundation.errors import KroniiError, PermissionDenied

__all__ = ["PAGE_FRAMES", "CapturesDay", "FrameOpened", "ShowCaptures"]

# Frames shown on one page of a day: a busy day's thousands stay readable and quick to send.
PAGE_FRAMES = 240


@dataclass(frozen=True)
class CapturesDay:
    day: date
    previous: date
    following: date | None  # None: the day is today (nothing later to show)
    hours: tuple[HourOfFrames, ...]
    count: int
    problem: str
    page: int = 1
    pages: int = 1


@dataclass(frozen=True)
class FrameOpened:
    """The redacted PNG, or the sentence the capture service refused it with."""

    png: bytes | None
    refusal: str


class ShowCaptures:
    def __init__(self, capture: CaptureFrames, audit: AuditTrail, clock: Clock, tz: tzinfo) -> None:
        self._capture = capture
        self._audit = audit
        self._clock = clock
        self.tz = tz

    def today(self) -> date:
        return datetime.fromtimestamp(self._clock.wall(), self.tz).date()

    async def day(self, text: str | None, page: int = 1) -> CapturesDay:
        """The day's frames (today when `text` is empty), PAGE_FRAMES at a time, oldest first."""
        today = self.today()
        day = parse_day(text, today)
        since, until = day_range(day, self.tz)
        frames: list[Frame] = []
        problem = ""
        try:
            frames = await self._capture.frames(since, until)
        except KroniiError as error:
            problem = str(error)
        pages = max(1, -(-len(frames) // PAGE_FRAMES))
        page = min(max(page, 1), pages)
        shown = frames[(page - 1) * PAGE_FRAMES : page * PAGE_FRAMES]
        return CapturesDay(
            day=day,
            previous=date.fromordinal(day.toordinal() - 1),
            following=None if day >= today else date.fromordinal(day.toordinal() + 1),
            hours=tuple(frames_by_hour(shown, self.tz)),
            count=len(frames),
            problem=problem,
            page=page,
            pages=pages,
        )

    async def thumbnail(self, screenshot_id: str) -> bytes:
        return await self._capture.thumbnail(frame_id(screenshot_id))

    async def open(self, person: str, screenshot_id: str) -> FrameOpened:
        """The full redacted frame; capture asks for the person's presence and says why not."""
        checked = frame_id(screenshot_id)
        try:
            png = await self._capture.open_frame(checked)
        except PermissionDenied as refused:
            await self._audit(
                actor=person,
                action="console.captures.open",
                subject=checked,
                outcome="refused",
                reason=str(refused),
            )
            return FrameOpened(None, str(refused))
        await self._audit(actor=person, action="console.captures.open", subject=checked, outcome="ok")
        return FrameOpened(png, "")
