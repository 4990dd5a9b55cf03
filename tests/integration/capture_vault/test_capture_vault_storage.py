"""The object vault on real PostgreSQL and a real key file: what lies on disk is ciphertext only,
each object opens only under its own id and kind, and the directory must be private."""

from __future__ import annotations

import io
import os
import shutil
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from kronii.capture.adapters.vault import ObjectVault
from kronii.capture.adapters.vault_files import ObjectNotFound, UnsafeVaultDirectory
from kronii.capture.adapters.vault_table import capture_objects
from kronii.crypto import DecryptionError, KeyFileProvider
from PIL import Image, UnidentifiedImageError
from sqlalchemy import select

from tests.integration.capture_vault.conftest import Sessions
from tests.integration.capture_vault.vault_support import new_job_id, png_image

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _in_a_week() -> datetime:
    return datetime.now(UTC) + timedelta(days=7)


def _files(root: Path) -> dict[str, bytes]:
    return {entry.name: entry.read_bytes() for entry in root.iterdir() if entry.is_file()}


async def test_stored_files_are_not_readable_images_without_the_keys(
    db: Sessions, provider: KeyFileProvider, tmp_path: Path
) -> None:
    root = tmp_path / "objects"
    vault = ObjectVault(root, db, provider)
    image = png_image(3)
    job = new_job_id()
    first = await vault.put(job_id=job, kind="raw", png=image, width=64, height=48, expires_at=_in_a_week())
    second = await vault.put(job_id=job, kind="raw", png=image, width=64, height=48, expires_at=_in_a_week())

    files = _files(root)
    # Files are named by their random object ids only: no job, app or window in the name.
    assert set(files) == {f"{first}.sealed", f"{second}.sealed"}
    for name, data in files.items():
        assert not data.startswith(PNG_MAGIC)
        assert PNG_MAGIC not in data
        assert image not in data
        with pytest.raises(UnidentifiedImageError):
            Image.open(io.BytesIO(data))
        assert stat.S_IMODE(os.stat(root / name).st_mode) == 0o600
    # Identical images, different content keys and nonces: nothing on disk reveals they are equal.
    assert len(set(files.values())) == 2
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700

    assert await vault.open_plain(first, "raw") == image
    assert await vault.open_plain(second, "raw") == image
    opened = Image.open(io.BytesIO(await vault.open_plain(first, "raw")))
    assert opened.size == (64, 48)


async def test_sealed_bytes_are_the_file_as_stored_never_the_image(
    db: Sessions, provider: KeyFileProvider, tmp_path: Path
) -> None:
    vault = ObjectVault(tmp_path / "objects", db, provider)
    image = png_image(4)
    object_id = await vault.put(
        job_id=new_job_id(), kind="raw", png=image, width=64, height=48, expires_at=_in_a_week()
    )

    sealed, version = await vault.sealed_bytes(object_id, kind="raw")

    assert version == provider.current_version
    assert image not in sealed
    assert sealed in _files(tmp_path / "objects").values()


async def test_an_object_opens_only_as_its_own_kind(
    db: Sessions, provider: KeyFileProvider, tmp_path: Path
) -> None:
    vault = ObjectVault(tmp_path / "objects", db, provider)
    raw_id = await vault.put(
        job_id=new_job_id(), kind="raw", png=png_image(5), width=64, height=48, expires_at=_in_a_week()
    )

    with pytest.raises(ObjectNotFound):
        await vault.open_plain(raw_id, "redacted")


async def test_a_file_copied_onto_another_id_does_not_open(
    db: Sessions, provider: KeyFileProvider, tmp_path: Path
) -> None:
    root = tmp_path / "objects"
    vault = ObjectVault(root, db, provider)
    job = new_job_id()
    secret = await vault.put(
        job_id=job, kind="raw", png=png_image(6), width=64, height=48, expires_at=_in_a_week()
    )
    harmless = await vault.put(
        job_id=job, kind="redacted", png=png_image(7), width=64, height=48, expires_at=_in_a_week()
    )
    # Swap whole records too: the raw file under the redacted id, with the raw row's wrapped key.
    async with db() as session, session.begin():
        raw_row = (
            await session.execute(select(capture_objects).where(capture_objects.c.object_id == secret))
        ).one()
        await session.execute(
            capture_objects.update()
            .where(capture_objects.c.object_id == harmless)
            .values(wrapped_key=raw_row.wrapped_key, key_version=raw_row.key_version)
        )
    shutil.copyfile(root / f"{secret}.sealed", root / f"{harmless}.sealed")

    with pytest.raises(DecryptionError):
        await vault.open_plain(harmless, "redacted")


@pytest.mark.parametrize("object_id", ["../../etc/passwd", "", "a/b", "x" * 100, "short"])
async def test_ids_that_are_not_vault_ids_are_not_found(
    db: Sessions, provider: KeyFileProvider, tmp_path: Path, object_id: str
) -> None:
    vault = ObjectVault(tmp_path / "objects", db, provider)

    with pytest.raises(ObjectNotFound) as caught:
        await vault.open_plain(object_id, "redacted")
    assert str(tmp_path) not in str(caught.value)


def test_the_vault_refuses_a_directory_that_others_can_read(
    db: Sessions, provider: KeyFileProvider, tmp_path: Path
) -> None:
    root = tmp_path / "objects"
    root.mkdir(mode=0o700)
    root.chmod(0o750)

    with pytest.raises(UnsafeVaultDirectory) as caught:
        ObjectVault(root, db, provider)
    assert "0750" in str(caught.value)
    assert str(tmp_path) not in str(caught.value)


def test_the_vault_creates_its_directory_private(
    db: Sessions, provider: KeyFileProvider, tmp_path: Path
) -> None:
    ObjectVault(tmp_path / "capture" / "objects", db, provider)

    assert stat.S_IMODE(os.stat(tmp_path / "capture" / "objects").st_mode) == 0o700


async def test_listing_shows_live_objects_newest_first_without_paths(
    db: Sessions, provider: KeyFileProvider, tmp_path: Path
) -> None:
    vault = ObjectVault(tmp_path / "objects", db, provider)
    job = new_job_id()
    older = await vault.put(
        job_id=job, kind="redacted", png=png_image(8), width=64, height=48, score=0.4,
        redaction_level="amber", masked_fraction=0.1, expires_at=_in_a_week(),
    )  # fmt: skip
    newer = await vault.put(
        job_id=job, kind="redacted", png=png_image(9), width=64, height=48, score=0.7,
        redaction_level="green", expires_at=_in_a_week(),
    )  # fmt: skip
    gone = await vault.put(
        job_id=job, kind="redacted", png=png_image(10), width=64, height=48,
        expires_at=datetime.now(UTC) - timedelta(seconds=1),
    )  # fmt: skip

    listed = [meta for meta in await vault.list_meta(500, kind="redacted") if meta.job_id == job]

    assert [meta.object_id for meta in listed] == [newer, older]
    assert gone not in {meta.object_id for meta in listed}
    assert listed[1].redaction_level == "amber"
    assert listed[1].masked_fraction == pytest.approx(0.1)
    assert all(str(tmp_path) not in repr(meta) for meta in listed)
    with pytest.raises(ObjectNotFound):
        await vault.open_plain(gone, "redacted")
