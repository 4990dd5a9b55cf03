"""Key rotation: rewrap every live content key under the newest master key, in the table only.

Image files are never opened: a sealed file stays as it is, only the wrapped key beside it changes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kronii.capture.adapters.vault_table import capture_objects
from kronii.crypto import DecryptionError, MasterKeyProvider, WrappedKey
from sqlalchemy import ColumnElement, func, or_, select, true, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

__all__ = ["ProgressCallback", "RotationReport", "rotate_content_keys"]

log = logging.getLogger(__name__)

ProgressCallback = Callable[[int, int], None]


@dataclass(frozen=True)
class RotationReport:
    provider: str
    previous_version: int
    key_version: int
    rewrapped: int
    already_current: int
    failed: int
    # Rotation works on the wrapped keys in the table only; kept in the report so callers can say so.
    image_files_touched: int = 0


@dataclass(frozen=True)
class _Rewrap:
    """One rotation's keys: from `source` to `target`, which rows count as stale."""

    source: MasterKeyProvider
    target: MasterKeyProvider
    moving: bool
    stale: ColumnElement[bool]


async def rotate_content_keys(
    sessions: async_sessionmaker[AsyncSession],
    source: MasterKeyProvider,
    target: MasterKeyProvider,
    *,
    new_version: bool,
    batch_size: int,
    progress: ProgressCallback | None,
) -> RotationReport:
    """Rewrap the stale content keys in batches of ``batch_size``, calling ``progress(done, total)`` after each.

    A row changed by someone else meanwhile (purged, say) is left alone; a key that no longer unwraps
    is counted as failed and logged.
    """
    previous = target.current_version
    version = await asyncio.to_thread(target.rotate) if new_version else previous
    o = capture_objects.c
    moving = target is not source
    # Moving to another provider rewraps everything: two key files share the name "keyfile".
    stale = true() if moving else or_(o.provider != target.name, o.key_version != version)
    rewrap = _Rewrap(source, target, moving, stale)
    total, live = await _count_stale_and_live(sessions, stale)
    log.info(
        "capture vault: rewrapping %d content keys under %s master key version %d",
        total,
        target.name,
        version,
    )
    rewrapped = failed = 0
    after = ""
    while batch := await _next_batch(sessions, stale, after, batch_size):
        after = batch[-1].object_id
        done, broken = await _rewrap_batch(sessions, rewrap, batch)
        rewrapped, failed = rewrapped + done, failed + broken
        log.info("capture vault: rewrapped %d of %d content keys", rewrapped, total)
        if progress is not None:
            progress(rewrapped + failed, total)
    return RotationReport(
        provider=target.name,
        previous_version=previous,
        key_version=version,
        rewrapped=rewrapped,
        already_current=max(0, live - total),
        failed=failed,
    )


async def _count_stale_and_live(
    sessions: async_sessionmaker[AsyncSession], stale: ColumnElement[bool]
) -> tuple[int, int]:
    o = capture_objects.c
    async with sessions() as session:
        total = int(
            await session.scalar(
                select(func.count()).select_from(capture_objects).where(o.purged_at.is_(None), stale)
            )
            or 0
        )
        live = int(
            await session.scalar(
                select(func.count()).select_from(capture_objects).where(o.purged_at.is_(None))
            )
            or 0
        )
    return total, live


async def _next_batch(
    sessions: async_sessionmaker[AsyncSession], stale: ColumnElement[bool], after: str, batch_size: int
) -> Sequence[Any]:
    o = capture_objects.c
    async with sessions() as session:
        return (
            await session.execute(
                select(o.object_id, o.provider, o.key_version, o.wrapped_key)
                .where(o.purged_at.is_(None), o.wrapped_key.is_not(None), stale, o.object_id > after)
                .order_by(o.object_id)
                .limit(batch_size)
            )
        ).all()


async def _rewrap_batch(
    sessions: async_sessionmaker[AsyncSession], rewrap: _Rewrap, batch: Sequence[Any]
) -> tuple[int, int]:
    """(rewrapped, failed) for one batch of rows."""
    o = capture_objects.c
    rewrapped = failed = 0
    for row in batch:
        old = WrappedKey(provider=row.provider, key_version=row.key_version, blob=row.wrapped_key)
        try:
            fresh = await asyncio.to_thread(_rewrap_between, old, rewrap.source, rewrap.target, rewrap.moving)
        except DecryptionError as error:
            failed += 1
            log.error("capture vault: content key of object %s does not unwrap: %s", row.object_id, error)
            continue
        async with sessions() as session, session.begin():
            result = await session.execute(
                update(capture_objects)
                .where(
                    o.object_id == row.object_id,
                    o.purged_at.is_(None),
                    o.wrapped_key == row.wrapped_key,
                )
                .values(provider=fresh.provider, key_version=fresh.key_version, wrapped_key=fresh.blob)
            )
        if getattr(result, "rowcount", 0) == 1:
            rewrapped += 1
    return rewrapped, failed


def _rewrap_between(
    old: WrappedKey, source: MasterKeyProvider, target: MasterKeyProvider, moving: bool
) -> WrappedKey:
    if not moving:
        return target.rewrap(wrapped=old)
    # Between providers the content key is in this process's memory for the moment it takes.
    return target.wrap(key=source.unwrap(wrapped=old))
