"""The encrypted object vault: every image sealed under its own content key, stored under a random id.

Image bytes live in files named by object id inside one 0700 directory (adapters.vault_files), each
sealed with AES-256-GCM under a fresh content key (kronii.crypto.seal, the object id as associated
data, so a file renamed to another id does not open). Metadata and the wrapped content key live in
the ``capture_objects`` table (adapters.vault_table). Rotation (adapters.vault_rotation) rewraps the
keys in the table and never reads or writes a file.

Nothing this module raises or logs names a filesystem path (not even the vault directory's): errors cross the API as sentences and
object ids are the only names a caller ever sees.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kronii.capture.adapters.vault_files import (
    ObjectNotFound,
    VaultError,
    check_object_id,
    object_path,
    prepare_root,
    read_private,
    write_private,
)
from kronii.capture.adapters.vault_rotation import ProgressCallback, RotationReport, rotate_content_keys
from kronii.capture.adapters.vault_table import capture_jobs, capture_objects
from kronii.capture.core.ids import new_id
from kronii.capture.core.screenshots import KINDS, ObjectKind, ObjectMeta, PurgeReport
from kronii.crypto import MasterKeyProvider, SealedObject, WrappedKey, open_sealed, seal
from kronii.foundation.audit_trail import AuditTrail
from sqlalchemy import func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

__all__ = ["ObjectVault", "RawStorageDisabled"]

log = logging.getLogger(__name__)

_OBJECT_ID_BYTES = 18  # 24 URL-safe characters, 144 random bits


class RawStorageDisabled(VaultError):
    """Raw frames are not kept (raw retention is 0 days)."""


class ObjectVault:
    """Sealed image files plus their rows in ``capture_objects``.

    ``store_raw=False`` is raw retention 0: raw frames are refused by :meth:`put` and every raw
    object still on disk is removed by the next :meth:`purge_expired`.
    """

    def __init__(
        self,
        root: Path,
        sessions: async_sessionmaker[AsyncSession],
        provider: MasterKeyProvider,
        *,
        store_raw: bool = True,
        record: AuditTrail | None = None,
    ) -> None:
        self._root = Path(root)
        self._sessions = sessions
        self._provider = provider
        self._store_raw = store_raw
        self._record = record
        prepare_root(self._root)

    @property
    def provider(self) -> MasterKeyProvider:
        return self._provider

    @property
    def stores_raw(self) -> bool:
        return self._store_raw

    def _path(self, object_id: str) -> Path:
        return object_path(self._root, object_id)

    # -- writing ---------------------------------------------------------------------------------

    async def put(
        self,
        *,
        job_id: str,
        kind: ObjectKind,
        png: bytes,
        width: int,
        height: int,
        score: float = 0.0,
        redaction_level: str = "",
        masked_fraction: float = 0.0,
        expires_at: datetime | None,
    ) -> str:
        """Seal ``png`` under a fresh content key, write it 0600 and fsync'd, then record its row.

        Returns the new object id. The file is removed again if the row cannot be written, so a
        file never exists without the row that says when to purge it.
        """
        if kind not in KINDS:
            raise ValueError(f"kind must be 'raw' or 'redacted', not {kind!r}")
        if kind == "raw" and not self._store_raw:
            raise RawStorageDisabled("raw frames are not kept: raw retention is 0 days")
        object_id = new_id(_OBJECT_ID_BYTES)
        sealed = await self._seal_into_file(object_id, png)
        described = {
            "object_id": object_id,
            "job_id": job_id,
            "kind": kind,
            "width": width,
            "height": height,
            "score": float(score),
            "redaction_level": redaction_level,
            "masked_fraction": float(masked_fraction),
        }
        try:
            await self._insert_row(described, sealed, expires_at)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(self._path(object_id))
            raise
        return object_id

    async def _seal_into_file(self, object_id: str, png: bytes) -> SealedObject:
        """``png`` sealed under a fresh content key (the object id as associated data), the file
        written 0600 and fsync'd; an error says why without naming the file."""
        sealed = await asyncio.to_thread(
            seal, png, master=self._provider, associated_data=object_id.encode("ascii")
        )
        try:
            await asyncio.to_thread(write_private, self._root, self._path(object_id).name, sealed.ciphertext)
        except OSError as error:  # its text would name the file
            raise VaultError(f"the screenshot could not be stored: {error.strerror}") from None
        return sealed

    async def _insert_row(
        self, described: dict[str, Any], sealed: SealedObject, expires_at: datetime | None
    ) -> None:
        """The object's row: what describes it, its wrapped content key, when it was made and expires."""
        async with self._sessions() as session, session.begin():
            await session.execute(
                insert(capture_objects).values(
                    **described,
                    provider=sealed.wrapped_key.provider,
                    key_version=sealed.wrapped_key.key_version,
                    wrapped_key=sealed.wrapped_key.blob,
                    size_bytes=len(sealed.ciphertext),
                    created_at=datetime.now(UTC),
                    expires_at=expires_at,
                )
            )

    # -- reading ---------------------------------------------------------------------------------

    async def _live_row(self, object_id: str, kind: ObjectKind | None) -> Any:
        check_object_id(object_id)
        query = select(capture_objects).where(
            capture_objects.c.object_id == object_id,
            capture_objects.c.purged_at.is_(None),
            or_(capture_objects.c.expires_at.is_(None), capture_objects.c.expires_at > datetime.now(UTC)),
        )
        if kind is not None:
            query = query.where(capture_objects.c.kind == kind)
        async with self._sessions() as session:
            row = (await session.execute(query)).first()
        if row is None or row.wrapped_key is None:
            raise ObjectNotFound(object_id)
        return row

    async def _ciphertext(self, object_id: str) -> bytes:
        try:
            return await asyncio.to_thread(read_private, self._path(object_id))
        except FileNotFoundError:
            log.error("capture vault: object %s has a row but no file", object_id)
            raise ObjectNotFound(object_id) from None
        except OSError as error:
            raise VaultError(f"the screenshot could not be read: {error.strerror}") from None

    async def open_plain(self, object_id: str, kind: ObjectKind) -> bytes:
        """The decrypted bytes of a live object of ``kind``. Internal only: never for raw frames to callers.

        Raises :class:`ObjectNotFound` for an unknown, expired, purged or other-kind id and
        :class:`kronii.crypto.DecryptionError` when the file or its key does not authenticate.
        """
        row = await self._live_row(object_id, kind)
        ciphertext = await self._ciphertext(object_id)
        sealed = SealedObject(
            ciphertext=ciphertext,
            wrapped_key=WrappedKey(provider=row.provider, key_version=row.key_version, blob=row.wrapped_key),
        )
        return await asyncio.to_thread(
            open_sealed, sealed, master=self._provider, associated_data=object_id.encode("ascii")
        )

    async def sealed_bytes(self, object_id: str, *, kind: ObjectKind | None = None) -> tuple[bytes, int]:
        """The ciphertext as stored (nonce || ciphertext || tag) and its master key version; never plaintext."""
        row = await self._live_row(object_id, kind)
        return await self._ciphertext(object_id), int(row.key_version)

    async def meta(self, object_id: str) -> ObjectMeta:
        """The metadata of one live object."""
        check_object_id(object_id)
        found = await self._select_meta(capture_objects.c.object_id == object_id, limit=1)
        if not found:
            raise ObjectNotFound(object_id)
        return found[0]

    async def list_meta(self, limit: int = 50, *, kind: ObjectKind | None = None) -> list[ObjectMeta]:
        """Live objects, newest first (at most ``limit``, capped at 500)."""
        condition = capture_objects.c.kind == kind if kind is not None else None
        return await self._select_meta(condition, limit=max(1, min(limit, 500)))

    async def _select_meta(self, condition: Any, *, limit: int) -> list[ObjectMeta]:
        o = capture_objects.c
        query = (
            select(
                o.object_id,
                o.job_id,
                o.kind,
                capture_jobs.c.spec["app_name"].astext.label("app_name"),
                o.width,
                o.height,
                o.score,
                o.redaction_level,
                o.masked_fraction,
                o.key_version,
                o.size_bytes,
                o.created_at,
                o.expires_at,
            )
            .select_from(capture_objects.outerjoin(capture_jobs, capture_jobs.c.job_id == o.job_id))
            .where(
                o.purged_at.is_(None),
                or_(o.expires_at.is_(None), o.expires_at > datetime.now(UTC)),
            )
            .order_by(o.created_at.desc(), o.object_id)
            .limit(limit)
        )
        if condition is not None:
            query = query.where(condition)
        async with self._sessions() as session:
            rows = (await session.execute(query)).all()
        return [
            ObjectMeta(
                object_id=row.object_id,
                job_id=row.job_id,
                kind=row.kind,
                app_name=row.app_name or "",
                width=row.width,
                height=row.height,
                score=row.score,
                redaction_level=row.redaction_level,
                masked_fraction=row.masked_fraction,
                key_version=row.key_version,
                size_bytes=row.size_bytes,
                created_at=row.created_at,
                expires_at=row.expires_at,
            )
            for row in rows
        ]

    async def key_versions(self) -> dict[tuple[str, int], int]:
        """How many live objects each (provider, master key version) wraps."""
        o = capture_objects.c
        query = (
            select(o.provider, o.key_version, func.count())
            .where(o.purged_at.is_(None))
            .group_by(o.provider, o.key_version)
        )
        async with self._sessions() as session:
            rows = (await session.execute(query)).all()
        return {(str(provider), int(version)): int(count) for provider, version, count in rows}

    # -- retention -------------------------------------------------------------------------------

    async def purge_expired(self, now: datetime | None = None) -> PurgeReport:
        """Delete the files of expired objects (and of every raw one when raw is not kept).

        The row stays, marked purged and without its wrapped key: the audit trail keeps the
        metadata while no copy of the file (a backup, say) can be opened any more.
        """
        moment = now or datetime.now(UTC)
        counts = {"raw": 0, "redacted": 0}
        missing = 0
        purged: list[str] = []
        for object_id, kind in await self._due(moment):
            removed = await self._delete_file(object_id)
            if removed is None:
                continue  # left for the next purge; the row keeps its key until the file is really gone
            missing += 0 if removed else 1
            await self._mark_purged(object_id, moment)
            counts[kind] += 1
            purged.append(object_id)
        report = PurgeReport(counts["raw"], counts["redacted"], missing, tuple(purged))
        if purged:
            await self._tell_purged(report)
        return report

    async def _due(self, moment: datetime) -> list[Any]:
        """(object id, kind) of every live object expired at ``moment``, and of every raw one when
        raw is not kept."""
        o = capture_objects.c
        due = o.expires_at <= moment
        if not self._store_raw:
            due = or_(due, o.kind == "raw")
        async with self._sessions() as session:
            return list(
                (await session.execute(select(o.object_id, o.kind).where(o.purged_at.is_(None), due))).all()
            )

    async def _delete_file(self, object_id: str) -> bool | None:
        """True when the file was deleted, False when it was already gone, None when it could not
        be deleted (logged, by object id only)."""
        try:
            await asyncio.to_thread(os.unlink, self._path(object_id))
        except FileNotFoundError:
            return False
        except OSError as error:
            log.error("capture vault: cannot delete object %s: %s", object_id, error.strerror)
            return None
        return True

    async def _mark_purged(self, object_id: str, moment: datetime) -> None:
        """The row stays, marked purged, and loses its wrapped key."""
        o = capture_objects.c
        async with self._sessions() as session, session.begin():
            await session.execute(
                update(capture_objects)
                .where(o.object_id == object_id, o.purged_at.is_(None))
                .values(purged_at=moment, wrapped_key=None)
            )

    async def _tell_purged(self, report: PurgeReport) -> None:
        """The log line and, with an audit trail, its row for a purge that removed something."""
        log.info(
            "capture vault: purged %d raw and %d redacted objects",
            report.raw_purged,
            report.redacted_purged,
        )
        if self._record is not None:
            await self._record(
                actor="capture.retention",
                action="capture.purge",
                outcome="ok",
                raw_purged=report.raw_purged,
                redacted_purged=report.redacted_purged,
                files_missing=report.files_missing,
                object_ids=list(report.object_ids),
            )

    # -- key rotation ----------------------------------------------------------------------------

    async def rotate(
        self,
        *,
        new_version: bool = True,
        into: MasterKeyProvider | None = None,
        batch_size: int = 200,
        progress: ProgressCallback | None = None,
    ) -> RotationReport:
        """Rewrap every live content key under the newest master key; image files are not opened.

        ``new_version`` first makes the provider create a new master key version. ``into`` moves the
        keys to another provider (say from a key file to Vault transit); the vault then uses it.
        ``progress(done, total)`` is called after each batch. A row changed by someone else meanwhile
        (purged, say) is left alone; a key that no longer unwraps is counted as failed and logged.
        """
        target = into or self._provider
        report = await rotate_content_keys(
            self._sessions,
            self._provider,
            target,
            new_version=new_version,
            batch_size=batch_size,
            progress=progress,
        )
        self._provider = target
        if self._record is not None:
            await self._record(
                actor="capture.keys",
                action="capture.keys.rotate",
                outcome="ok" if report.failed == 0 else "partial",
                provider=report.provider,
                previous_version=report.previous_version,
                key_version=report.key_version,
                rewrapped=report.rewrapped,
                failed=report.failed,
                image_files_touched=0,
            )
        return report
