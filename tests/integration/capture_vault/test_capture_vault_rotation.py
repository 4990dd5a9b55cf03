"""Master key rotation rewraps every content key and leaves the image files byte for byte alone;
`kronii keys rotate|status` does it from the command line against the database."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from kronii.capture.adapters.master_key import master_key_provider
from kronii.capture.adapters.vault import ObjectVault
from kronii.capture.adapters.vault_files import default_vault_root
from kronii.capture.adapters.vault_table import capture_objects
from kronii.capture.cli import keys
from kronii.capture.core.screenshots import ObjectKind
from kronii.crypto import KeyFileProvider
from kronii.stores.audit import AuditLog
from kronii.stores.db import make_engine, make_sessionmaker, migrate_up
from sqlalchemy import select

from tests.integration.capture_vault.conftest import Sessions
from tests.integration.capture_vault.vault_support import audit_recorder, new_job_id, png_image


@pytest_asyncio.fixture
async def own_db(fresh_database: str) -> AsyncIterator[tuple[str, Sessions]]:
    """A database of its own: rotation counts every object in it."""
    migrate_up(fresh_database, "0004_capture")
    engine = make_engine(fresh_database)
    try:
        yield fresh_database, make_sessionmaker(engine)
    finally:
        await engine.dispose()


def _fingerprints(root: Path) -> dict[str, tuple[str, int, int]]:
    """sha256, inode and mtime of every file: a rewritten file changes at least one of them."""
    result = {}
    for entry in sorted(root.iterdir()):
        info = entry.stat()
        result[entry.name] = (hashlib.sha256(entry.read_bytes()).hexdigest(), info.st_ino, info.st_mtime_ns)
    return result


async def _key_versions(db: Sessions) -> set[int]:
    async with db() as session:
        return set((await session.scalars(select(capture_objects.c.key_version))).all())


async def test_rotation_keeps_every_image_readable_and_touches_no_file(
    own_db: tuple[str, Sessions], tmp_path: Path
) -> None:
    _url, db = own_db
    provider = KeyFileProvider(tmp_path / "keys")
    audit = AuditLog(db, "capture")
    root = tmp_path / "objects"
    vault = ObjectVault(root, db, provider, record=audit_recorder(audit))
    expires = datetime.now(UTC) + timedelta(days=1)
    images: dict[str, tuple[ObjectKind, bytes]] = {}
    for seed in range(5):
        image = png_image(seed)
        kind: ObjectKind = "raw" if seed % 2 else "redacted"
        object_id = await vault.put(
            job_id=new_job_id(), kind=kind, png=image, width=64, height=48, expires_at=expires
        )
        images[object_id] = (kind, image)
    before = _fingerprints(root)
    assert await _key_versions(db) == {1}
    progress: list[tuple[int, int]] = []

    report = await vault.rotate(batch_size=2, progress=lambda done, total: progress.append((done, total)))

    assert (report.previous_version, report.key_version) == (1, 2)
    assert report.rewrapped == 5
    assert report.failed == 0
    assert report.image_files_touched == 0
    assert progress[-1] == (5, 5)
    assert len(progress) == 3  # batches of 2, 2 and 1
    assert _fingerprints(root) == before
    assert await _key_versions(db) == {2}
    # A new process (a fresh provider reading the key file) opens every image.
    reopened = ObjectVault(root, db, KeyFileProvider(tmp_path / "keys"))
    for object_id, (kind, image) in images.items():
        assert await reopened.open_plain(object_id, kind) == image
    rows = [row for row in await audit.tail(5) if row.action == "capture.keys.rotate"]
    assert rows
    assert rows[-1].detail["rewrapped"] == 5
    assert rows[-1].detail["image_files_touched"] == 0


async def test_rotation_into_another_provider_moves_every_key(
    own_db: tuple[str, Sessions], tmp_path: Path
) -> None:
    _url, db = own_db
    old = KeyFileProvider(tmp_path / "old-keys")
    root = tmp_path / "objects"
    vault = ObjectVault(root, db, old)
    image = png_image(11)
    object_id = await vault.put(
        job_id=new_job_id(), kind="redacted", png=image, width=64, height=48, expires_at=None
    )
    before = _fingerprints(root)
    new = KeyFileProvider(tmp_path / "new-keys")

    report = await vault.rotate(new_version=False, into=new)

    assert report.rewrapped == 1
    assert _fingerprints(root) == before
    # The old master key is no longer needed: the new provider alone opens the image.
    assert await ObjectVault(root, db, new).open_plain(object_id, "redacted") == image


def _cli_environment(monkeypatch: pytest.MonkeyPatch, database_url: str, data_dir: Path) -> None:
    monkeypatch.setenv("KRONII_DATABASE_URL", database_url)
    monkeypatch.setenv("KRONII_DATA_DIR", str(data_dir))
    monkeypatch.setenv("KRONII_CAPTURE_USE_SECRET_SERVICE", "false")
    for name in (
        "KRONII_VAULT_URL",
        "KRONII_VAULT_TOKEN",
        "KRONII_CAPTURE_VAULT_URL",
        "KRONII_CAPTURE_VAULT_TOKEN",
    ):
        monkeypatch.delenv(name, raising=False)


async def test_keys_rotate_cli_rewraps_and_says_how_many(
    own_db: tuple[str, Sessions],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url, db = own_db
    data_dir = tmp_path / "data"
    _cli_environment(monkeypatch, url, data_dir)
    provider = master_key_provider(data_dir=data_dir, use_secret_service=False)
    vault = ObjectVault(default_vault_root(data_dir), db, provider)
    for seed in range(3):
        await vault.put(
            job_id=new_job_id(), kind="redacted", png=png_image(seed), width=64, height=48, expires_at=None
        )
    before = _fingerprints(default_vault_root(data_dir))

    # The CLI runs its own event loop, as it does from a terminal.
    code = await _in_thread(keys.main, ["keys", "rotate"])

    out = capsys.readouterr().out
    assert code == 0
    assert "rewrapped 3 content keys under master key version 2; 0 image files touched" in out
    assert "rewrapped 3 of 3 content keys" in out
    assert _fingerprints(default_vault_root(data_dir)) == before
    assert str(data_dir) not in out

    code = await _in_thread(keys.main, ["keys", "status", "--json"])

    status: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert code == 0
    assert status["provider"] == "keyfile"
    assert status["current_version"] == 2
    assert status["objects"] == 3
    assert status["objects_not_on_current_version"] == 0
    assert status["by_version"] == [{"provider": "keyfile", "key_version": 2, "objects": 3}]


async def test_keys_status_cli_counts_objects_left_on_an_older_version(
    own_db: tuple[str, Sessions],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url, db = own_db
    data_dir = tmp_path / "data"
    _cli_environment(monkeypatch, url, data_dir)
    provider = master_key_provider(data_dir=data_dir, use_secret_service=False)
    vault = ObjectVault(default_vault_root(data_dir), db, provider)
    await vault.put(job_id=new_job_id(), kind="raw", png=png_image(1), width=64, height=48, expires_at=None)
    provider.rotate()  # as a running service would see a rotation that has not rewrapped yet

    code = await _in_thread(keys.main, ["keys", "status"])

    out = capsys.readouterr().out
    assert code == 0
    assert "current version 2" in out
    assert "keyfile version 1: 1 objects" in out
    assert "1 not yet under the current version" in out


async def _in_thread(function: Any, argv: list[str]) -> int:
    return int(await asyncio.to_thread(function, argv))


def test_keys_rotate_refuses_a_batch_size_below_one_before_touching_anything() -> None:
    from click.testing import CliRunner

    result = CliRunner().invoke(keys.keys_command, ["rotate", "--batch-size", "0"], prog_name="kronii keys")

    assert result.exit_code == 2
    assert "Usage: kronii keys rotate" in result.output
    assert "0 is not in the range x>=1" in result.output
