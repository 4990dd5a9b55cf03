"""Retention: expired raw and redacted objects are purged (file deleted, key dropped, audited);
with raw retention 0 days no raw frame is stored and none survives a purge."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from kronii.capture.adapters.vault import ObjectVault, RawStorageDisabled
from kronii.capture.adapters.vault_files import ObjectNotFound
from kronii.capture.adapters.vault_table import capture_objects
from kronii.capture.core.retention import DAY_MS, expires_at_ms, keep_raw
from kronii.capture.core.screenshots import ObjectKind
from kronii.crypto import KeyFileProvider
from kronii.stores.audit import AuditLog
from sqlalchemy import select

from tests.integration.capture_vault.conftest import Sessions
from tests.integration.capture_vault.vault_support import audit_recorder, new_job_id, png_image


def _at(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, UTC)


async def _row(db: Sessions, object_id: str) -> Any:
    async with db() as session:
        return (
            await session.execute(select(capture_objects).where(capture_objects.c.object_id == object_id))
        ).one()


async def test_purge_deletes_expired_raw_and_redacted_files_and_drops_their_keys(
    db: Sessions, provider: KeyFileProvider, tmp_path: Path
) -> None:
    root = tmp_path / "objects"
    audit = AuditLog(db, "capture")
    vault = ObjectVault(root, db, provider, record=audit_recorder(audit))
    job = new_job_id()
    # Created two days ago with the default retention: raw (1 day) is due, redacted (7 days) is not.
    created_ms = int((datetime.now(UTC) - timedelta(days=2)).timestamp() * 1000)
    raw_expiry = _at(expires_at_ms("raw", created_ms, raw_days=1, redacted_days=7))
    redacted_expiry = _at(expires_at_ms("redacted", created_ms, raw_days=1, redacted_days=7))
    old_redacted_expiry = _at(created_ms + DAY_MS)  # a redacted copy kept only one day
    raw = await vault.put(
        job_id=job, kind="raw", png=png_image(1), width=64, height=48, expires_at=raw_expiry
    )
    kept = await vault.put(
        job_id=job, kind="redacted", png=png_image(2), width=64, height=48, expires_at=redacted_expiry
    )
    expired_redacted = await vault.put(
        job_id=job, kind="redacted", png=png_image(3), width=64, height=48, expires_at=old_redacted_expiry
    )

    report = await vault.purge_expired()

    assert {raw, expired_redacted} <= set(report.object_ids)
    assert kept not in report.object_ids
    assert sorted(entry.name for entry in root.iterdir()) == [f"{kept}.sealed"]
    gone_objects: list[tuple[str, ObjectKind]] = [(raw, "raw"), (expired_redacted, "redacted")]
    for gone, kind in gone_objects:
        row = await _row(db, gone)
        assert row.purged_at is not None
        assert row.wrapped_key is None
        with pytest.raises(ObjectNotFound):
            await vault.open_plain(gone, kind)
    assert await vault.open_plain(kept, "redacted") == png_image(2)
    purges = [row for row in await audit.tail(10) if row.action == "capture.purge"]
    assert purges
    assert {raw, expired_redacted} <= set(purges[-1].detail["object_ids"])
    assert str(tmp_path) not in str(purges[-1].detail)

    again = await vault.purge_expired()
    assert raw not in again.object_ids


async def test_raw_retention_zero_stores_no_raw_frame_and_purges_any_left(
    db: Sessions, provider: KeyFileProvider, tmp_path: Path
) -> None:
    root = tmp_path / "objects"
    job = new_job_id()
    far = datetime.now(UTC) + timedelta(days=30)
    # A raw frame stored while raw retention was still on.
    before = ObjectVault(root, db, provider, store_raw=keep_raw(1))
    leftover = await before.put(job_id=job, kind="raw", png=png_image(4), width=64, height=48, expires_at=far)
    vault = ObjectVault(root, db, provider, store_raw=keep_raw(0))

    assert expires_at_ms("raw", 0, raw_days=0, redacted_days=7) is None
    with pytest.raises(RawStorageDisabled):
        await vault.put(job_id=job, kind="raw", png=png_image(5), width=64, height=48, expires_at=far)
    redacted = await vault.put(
        job_id=job, kind="redacted", png=png_image(6), width=64, height=48, expires_at=far
    )
    report = await vault.purge_expired()

    assert leftover in report.object_ids
    assert report.raw_purged >= 1
    assert sorted(entry.name for entry in root.iterdir()) == [f"{redacted}.sealed"]
    assert not [meta for meta in await vault.list_meta(500, kind="raw") if meta.job_id == job]
