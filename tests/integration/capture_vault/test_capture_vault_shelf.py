"""The person's view of the vault on real PostgreSQL and real files: a range's redacted screenshots
(never raw), a redacted thumbnail scaled down, usage, and deletes of one, a range and all that
remove the sealed files and the rows, audited without a path."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from kronii.capture.adapters.vault import ObjectVault
from kronii.capture.adapters.vault_files import ObjectNotFound
from kronii.capture.adapters.vault_shelf import VaultShelf
from kronii.capture.adapters.vault_table import capture_objects
from kronii.capture.usecases.person_shelf import PersonShelf, Retention
from kronii.crypto import KeyFileProvider
from kronii.foundation.errors import NotFound
from kronii.stores.audit import AuditLog
from PIL import Image
from sqlalchemy import delete, func, select, update

from tests.integration.capture_vault.conftest import Sessions
from tests.integration.capture_vault.vault_support import audit_recorder, new_job_id, png_image


async def _stored(vault: ObjectVault, db: Sessions, *, kind: str, at: datetime, seed: int, job: str) -> str:
    object_id = await vault.put(
        job_id=job, kind=kind, png=png_image(seed, (800, 500)), width=800, height=500,  # type: ignore[arg-type]
        redaction_level="amber", expires_at=None,
    )  # fmt: skip
    async with db() as session, session.begin():
        await session.execute(
            update(capture_objects).where(capture_objects.c.object_id == object_id).values(created_at=at)
        )
    return object_id


async def _rows(db: Sessions) -> int:
    async with db() as session:
        return int(await session.scalar(select(func.count()).select_from(capture_objects)) or 0)


@pytest.fixture
async def day(db: Sessions) -> datetime:
    """A day in an empty table (the module's database is shared by its tests)."""
    async with db() as session, session.begin():
        await session.execute(delete(capture_objects))
    return datetime(2026, 12, 1, tzinfo=UTC)


async def test_a_range_lists_only_its_redacted_screenshots_oldest_first(
    db: Sessions, provider: KeyFileProvider, tmp_path: Path, day: datetime
) -> None:
    root = tmp_path / "objects"
    vault = ObjectVault(root, db, provider)
    shelf = VaultShelf(vault, root, db)
    job = new_job_id()
    late = await _stored(vault, db, kind="redacted", at=day + timedelta(hours=15), seed=1, job=job)
    early = await _stored(vault, db, kind="redacted", at=day + timedelta(hours=9), seed=2, job=job)
    await _stored(vault, db, kind="raw", at=day + timedelta(hours=10), seed=3, job=job)
    await _stored(vault, db, kind="redacted", at=day + timedelta(days=1, hours=1), seed=4, job=job)

    found = await shelf.between(day, day + timedelta(days=1), 100)

    assert [item.screenshot_id for item in found] == [early, late]
    assert all(item.redaction_level == "amber" for item in found)


async def test_a_thumbnail_is_the_redacted_png_scaled_down_and_a_raw_id_does_not_open(
    db: Sessions, provider: KeyFileProvider, tmp_path: Path, day: datetime
) -> None:
    root = tmp_path / "objects"
    vault = ObjectVault(root, db, provider)
    shelf = VaultShelf(vault, root, db)
    job = new_job_id()
    redacted = await _stored(vault, db, kind="redacted", at=day, seed=5, job=job)
    raw = await _stored(vault, db, kind="raw", at=day, seed=6, job=job)

    thumb = await shelf.thumbnail(redacted, 200)

    with Image.open(io.BytesIO(thumb)) as image:
        assert image.format == "PNG"
        assert image.size == (200, 125)
    with pytest.raises(ObjectNotFound):
        await shelf.thumbnail(raw, 200)


async def test_deleting_one_screenshot_removes_its_jobs_files_and_rows_and_leaves_others(
    db: Sessions, provider: KeyFileProvider, tmp_path: Path, day: datetime
) -> None:
    root = tmp_path / "objects"
    vault = ObjectVault(root, db, provider)
    audit = AuditLog(db, "capture")
    person = PersonShelf(VaultShelf(vault, root, db), Retention(1, 7), audit_recorder(audit))
    job, other_job = new_job_id(), new_job_id()
    redacted = await _stored(vault, db, kind="redacted", at=day, seed=7, job=job)
    raw = await _stored(vault, db, kind="raw", at=day, seed=8, job=job)
    kept = await _stored(vault, db, kind="redacted", at=day, seed=9, job=other_job)

    report = await person.forget_one("local:uid:1000", redacted)

    assert report.objects_deleted == 2 and report.files_removed == 2
    assert sorted(path.name for path in root.iterdir()) == [f"{kept}.sealed"]
    async with db() as session:
        left = set((await session.scalars(select(capture_objects.c.object_id))).all())
    assert redacted not in left and raw not in left and kept in left
    row = [r for r in await audit.tail(5) if r.action == "capture.delete"][-1]
    assert row.actor == "local:uid:1000" and row.detail["objects_deleted"] == 2
    assert str(tmp_path) not in str(row.detail)
    with pytest.raises(NotFound):
        await person.forget_one("local:uid:1000", redacted)


async def test_deleting_a_day_removes_that_days_files_and_rows_only_and_all_removes_the_rest(
    db: Sessions, provider: KeyFileProvider, tmp_path: Path, day: datetime
) -> None:
    root = tmp_path / "objects"
    vault = ObjectVault(root, db, provider)
    person = PersonShelf(
        VaultShelf(vault, root, db), Retention(1, 7), audit_recorder(AuditLog(db, "capture"))
    )
    before = await _rows(db)
    assert before == 0
    inside = [
        await _stored(vault, db, kind=kind, at=day + timedelta(hours=hour), seed=hour, job=new_job_id())
        for kind, hour in (("redacted", 0), ("raw", 12), ("redacted", 23))
    ]
    outside = await _stored(vault, db, kind="redacted", at=day + timedelta(days=1), seed=30, job=new_job_id())

    report = await person.forget_between("local:uid:1000", day, day + timedelta(days=1))

    assert report.objects_deleted == 3 and report.files_removed == 3
    assert {path.name for path in root.iterdir()} == {f"{outside}.sealed"}
    assert await _rows(db) == 1
    assert not (
        set(inside) & {item.screenshot_id for item in await person.between(day, day + timedelta(days=2), 50)}
    )
    usage = await person.usage()
    assert usage.redacted_objects >= 1

    everything = await person.forget_all("local:uid:1000")

    assert everything.objects_deleted == 1
    assert list(root.iterdir()) == []
    assert await _rows(db) == 0
    assert (await person.usage()).redacted_objects == 0
