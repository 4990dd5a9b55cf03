"""The person's view of the vault: the stored redacted screenshots of a time range, a small
redacted thumbnail of one, what the vault holds (objects, bytes), and a delete that really deletes.

A delete removes the sealed files from disk first and then the rows (unlike the retention purge,
which keeps a purged row without its key for the audit trail): what the person asked to forget
leaves no metadata behind either. A file that cannot be removed keeps its row, so the next delete
or purge finds it again. Only object ids cross this module; no path is raised or logged.
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
from datetime import datetime
from pathlib import Path
from typing import Any

from kronii.capture.adapters.vault import ObjectVault
from kronii.capture.adapters.vault_files import ObjectNotFound, check_object_id, object_path
from kronii.capture.adapters.vault_table import capture_jobs, capture_objects
from kronii.capture.core.screenshots import ForgetReport, ShelfItem, ShelfUsage
from sqlalchemy import delete, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

__all__ = ["VaultShelf"]

log = logging.getLogger(__name__)

# The most a listing answers in one call.
MAX_SHELF_PAGE = 2000


class VaultShelf:
    def __init__(self, vault: ObjectVault, root: Path, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._vault = vault
        self._root = Path(root)
        self._sessions = sessions

    async def between(self, since: datetime, until: datetime, limit: int) -> list[ShelfItem]:
        """Live redacted screenshots made in [since, until), oldest first."""
        o = capture_objects.c
        query = (
            select(
                o.object_id,
                o.job_id,
                capture_jobs.c.spec["app_name"].astext.label("app_name"),
                o.width,
                o.height,
                o.redaction_level,
                o.masked_fraction,
                o.size_bytes,
                o.created_at,
            )
            .select_from(capture_objects.outerjoin(capture_jobs, capture_jobs.c.job_id == o.job_id))
            .where(o.kind == "redacted", o.purged_at.is_(None), o.created_at >= since, o.created_at < until)
            .where(or_(o.expires_at.is_(None), o.expires_at > func.now()))
            .order_by(o.created_at, o.object_id)
            .limit(max(1, min(limit, MAX_SHELF_PAGE)))
        )
        async with self._sessions() as session:
            rows = (await session.execute(query)).all()
        return [
            ShelfItem(
                screenshot_id=row.object_id,
                job_id=row.job_id,
                app_name=row.app_name or "",
                width=row.width,
                height=row.height,
                redaction_level=row.redaction_level,
                masked_fraction=row.masked_fraction,
                size_bytes=row.size_bytes,
                created_at=row.created_at,
            )
            for row in rows
        ]

    async def thumbnail(self, screenshot_id: str, max_side: int) -> bytes:
        """A PNG of the REDACTED screenshot scaled to fit ``max_side`` pixels; a raw frame is never
        opened here (ObjectNotFound, as for an unknown id)."""
        png = await self._vault.open_plain(screenshot_id, "redacted")
        return await asyncio.to_thread(_downscaled, png, max_side)

    async def usage(self) -> ShelfUsage:
        """Live objects and their bytes on disk, by kind, and the oldest one's time."""
        o = capture_objects.c
        query = (
            select(o.kind, func.count(), func.coalesce(func.sum(o.size_bytes), 0), func.min(o.created_at))
            .where(o.purged_at.is_(None))
            .group_by(o.kind)
        )
        async with self._sessions() as session:
            rows = (await session.execute(query)).all()
        counts = {str(kind): (int(count), int(size)) for kind, count, size, _oldest in rows}
        oldest = min((row[3] for row in rows if row[3] is not None), default=None)
        return ShelfUsage(
            redacted_objects=counts.get("redacted", (0, 0))[0],
            redacted_bytes=counts.get("redacted", (0, 0))[1],
            raw_objects=counts.get("raw", (0, 0))[0],
            raw_bytes=counts.get("raw", (0, 0))[1],
            oldest=oldest,
        )

    async def forget_one(self, screenshot_id: str) -> ForgetReport:
        """The screenshot and every other object of its job (its raw frame, the burst's others)."""
        check_object_id(screenshot_id)
        o = capture_objects.c
        async with self._sessions() as session:
            job_id = await session.scalar(select(o.job_id).where(o.object_id == screenshot_id))
        if job_id is None:
            raise ObjectNotFound(screenshot_id)
        return await self._forget(o.job_id == job_id)

    async def forget_between(self, since: datetime, until: datetime) -> ForgetReport:
        """Every object (raw and redacted) made in [since, until)."""
        o = capture_objects.c
        return await self._forget((o.created_at >= since) & (o.created_at < until))

    async def forget_all(self) -> ForgetReport:
        return await self._forget(None)

    async def _forget(self, condition: Any) -> ForgetReport:
        o = capture_objects.c
        query = select(o.object_id)
        if condition is not None:
            query = query.where(condition)
        async with self._sessions() as session:
            ids = [str(value) for value in (await session.scalars(query)).all()]
        removed, missing, gone = 0, 0, []
        for object_id in ids:
            outcome = await self._remove_file(object_id)
            if outcome is None:
                continue  # the row stays, so the next delete finds the file again
            removed += 1 if outcome else 0
            missing += 0 if outcome else 1
            gone.append(object_id)
        for start in range(0, len(gone), 500):
            async with self._sessions() as session, session.begin():
                await session.execute(
                    delete(capture_objects).where(o.object_id.in_(gone[start : start + 500]))
                )
        return ForgetReport(
            objects_deleted=len(gone),
            files_removed=removed,
            files_missing=missing,
            files_kept=len(ids) - len(gone),
            object_ids=tuple(gone),
        )

    async def _remove_file(self, object_id: str) -> bool | None:
        """True when removed, False when it was already gone, None when it could not be removed."""
        try:
            await asyncio.to_thread(os.unlink, object_path(self._root, object_id))
        except FileNotFoundError:
            return False
        except OSError as error:
            log.error("capture vault: cannot delete object %s: %s", object_id, error.strerror)
            return None
        return True


def _downscaled(png: bytes, max_side: int) -> bytes:
    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        image.thumbnail((max_side, max_side))
        out = io.BytesIO()
        image.convert("RGB").save(out, format="PNG", optimize=True)
    return out.getvalue()
