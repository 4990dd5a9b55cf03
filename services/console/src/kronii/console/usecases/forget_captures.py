"""The person's delete of frames from the Captures page: one frame, a day (in the person's
timezone) or all of them. The capture service removes the sealed files and the rows (and audits
`capture.delete`); the console leaves its own row `console.captures.delete` with the counts."""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import tzinfo

from kronii.console.core.captures import Forgotten, day_range, frame_id, required_day
from kronii.console.ports import CaptureFrames
from kronii.foundation.audit_trail import AuditTrail
from kronii.foundation.errors import KroniiError

__all__ = ["ForgetCaptures"]


class ForgetCaptures:
    def __init__(self, capture: CaptureFrames, audit: AuditTrail, tz: tzinfo) -> None:
        self._capture = capture
        self._audit = audit
        self._tz = tz

    async def one(self, person: str, screenshot_id: str) -> Forgotten:
        checked = frame_id(screenshot_id)
        return await self._done(person, "one", checked, self._capture.forget_one(checked))

    async def day(self, person: str, day_text: str) -> Forgotten:
        day = required_day(day_text)
        since, until = day_range(day, self._tz)
        return await self._done(person, "day", day.isoformat(), self._capture.forget_between(since, until))

    async def everything(self, person: str) -> Forgotten:
        return await self._done(person, "all", "", self._capture.forget_all())

    async def _done(self, person: str, scope: str, subject: str, work: Awaitable[Forgotten]) -> Forgotten:
        try:
            forgotten = await work
        except KroniiError as error:
            await self._audit(
                actor=person, action="console.captures.delete", subject=subject, outcome=error.code,
                scope=scope, reason=str(error),
            )  # fmt: skip
            raise
        await self._audit(
            actor=person, action="console.captures.delete", subject=subject,
            outcome="ok" if forgotten.files_kept == 0 else "partial", scope=scope,
            deleted=forgotten.deleted, files_removed=forgotten.files_removed, files_kept=forgotten.files_kept,
        )  # fmt: skip
        return forgotten
