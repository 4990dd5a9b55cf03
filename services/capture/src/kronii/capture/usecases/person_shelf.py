"""The person's own view of their stored screenshots (the console's Captures and Privacy pages): a
time range's redacted screenshots, a small redacted thumbnail of one, what is kept and for how long,
and a delete of one screenshot, a range or everything that removes the files and the rows, audited
(`capture.delete`, with counts and object ids, never a path).

Opening a full screenshot is not here: it stays behind the person's proof of presence
(usecases.serve_screenshots through the guard), as for `kronii capture get`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from kronii.capture.core.screenshots import ForgetReport, ShelfItem, ShelfUsage
from kronii.capture.ports import ObjectMissing, ScreenshotShelf
from kronii.foundation.audit_trail import AuditTrail
from kronii.foundation.errors import InvalidArgument, NotFound

__all__ = ["MAX_RANGE", "PersonShelf", "Retention"]

# The longest range one listing or delete names (a year and a bit, like the activity history's).
MAX_RANGE = timedelta(days=400)
THUMBNAIL_SIDES = (64, 640)


@dataclass(frozen=True)
class Retention:
    """How long the vault keeps what it stores, in days (raw 0: no raw frame is kept)."""

    raw_days: int
    redacted_days: int


def check_range(since: datetime, until: datetime) -> None:
    if since.tzinfo is None or until.tzinfo is None:
        raise InvalidArgument("since and until need a time zone (an ISO-8601 time with Z or +hh:mm)")
    if until <= since:
        raise InvalidArgument("until must be later than since", field="until")
    if until - since > MAX_RANGE:
        raise InvalidArgument(f"a range is at most {MAX_RANGE.days} days", field="until")


class PersonShelf:
    def __init__(self, shelf: ScreenshotShelf, retention: Retention, record: AuditTrail) -> None:
        self._shelf = shelf
        self.retention = retention
        self._record = record

    async def between(self, since: datetime, until: datetime, limit: int) -> list[ShelfItem]:
        check_range(since, until)
        return await self._shelf.between(since, until, limit)

    async def thumbnail(self, screenshot_id: str, max_side: int) -> bytes:
        low, high = THUMBNAIL_SIDES
        if not low <= max_side <= high:
            raise InvalidArgument(f"size must be between {low} and {high} pixels", field="size")
        try:
            return await self._shelf.thumbnail(screenshot_id, max_side)
        except ObjectMissing:
            raise NotFound("no such screenshot (unknown, expired or deleted)") from None

    async def usage(self) -> ShelfUsage:
        return await self._shelf.usage()

    async def forget_one(self, actor: str, screenshot_id: str) -> ForgetReport:
        try:
            report = await self._shelf.forget_one(screenshot_id)
        except ObjectMissing:
            raise NotFound("no such screenshot (unknown, expired or deleted)") from None
        await self._audit(actor, "one", screenshot_id, report)
        return report

    async def forget_between(self, actor: str, since: datetime, until: datetime) -> ForgetReport:
        check_range(since, until)
        report = await self._shelf.forget_between(since, until)
        await self._audit(actor, "range", f"{since.isoformat()}/{until.isoformat()}", report)
        return report

    async def forget_all(self, actor: str) -> ForgetReport:
        report = await self._shelf.forget_all()
        await self._audit(actor, "all", "", report)
        return report

    async def _audit(self, actor: str, scope: str, subject: str, report: ForgetReport) -> None:
        await self._record(
            actor=actor,
            action="capture.delete",
            subject=subject,
            outcome="ok" if report.files_kept == 0 else "partial",
            scope=scope,
            objects_deleted=report.objects_deleted,
            files_removed=report.files_removed,
            files_missing=report.files_missing,
            files_kept=report.files_kept,
            object_ids=list(report.object_ids),
        )
