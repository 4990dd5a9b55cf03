"""The Vault transit master key against a real OpenBao dev server (Vault's API): wrap and unwrap, key
rotation and the capture vault's rewrap of stored objects in a real PostgreSQL, moving keys between a
key file and Vault, and the sentences for a wrong token, a missing key and a server that is down."""

from __future__ import annotations

import hashlib
import os
import secrets
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import hvac.exceptions  # type: ignore[import-untyped]
import pytest
import pytest_asyncio
from kronii.capture.adapters.vault import ObjectVault
from kronii.capture.adapters.vault_table import capture_objects
from kronii.crypto import (
    DecryptionError,
    KeyFileProvider,
    MasterKeyUnavailableError,
    VaultTransitProvider,
    WrappedKey,
    select_provider,
)
from kronii.launcher.infra import free_port
from kronii.stores.db import make_engine, make_sessionmaker, migrate_up
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from tests.integration.capture_vault.vault_support import new_job_id, png_image
from tests.integration.crypto.conftest import OpenBao, running_openbao

Sessions = async_sessionmaker[AsyncSession]


@pytest.fixture
def key_name(openbao: OpenBao) -> str:
    """A fresh transit key of its own for each test, at version 1."""
    name = "kronii-" + secrets.token_hex(6)
    openbao.client().secrets.transit.create_key(name=name)
    return name


@pytest.fixture
def transit(openbao: OpenBao, key_name: str) -> VaultTransitProvider:
    return VaultTransitProvider(openbao.url, openbao.token, key_name)


@pytest_asyncio.fixture
async def db(fresh_database: str) -> AsyncIterator[Sessions]:
    """A database of its own with the capture tables: rotation counts every object in it."""
    migrate_up(fresh_database, "0004_capture")
    engine = make_engine(fresh_database)
    try:
        yield make_sessionmaker(engine)
    finally:
        await engine.dispose()


async def _rows(db: Sessions) -> dict[str, tuple[str, int, bytes]]:
    o = capture_objects.c
    async with db() as session:
        rows = (await session.execute(select(o.object_id, o.provider, o.key_version, o.wrapped_key))).all()
    return {row.object_id: (row.provider, row.key_version, row.wrapped_key) for row in rows}


async def _store(vault: ObjectVault, count: int) -> dict[str, bytes]:
    expires = datetime.now(UTC) + timedelta(days=1)
    images = {}
    for seed in range(count):
        image = png_image(seed + 1)
        object_id = await vault.put(
            job_id=new_job_id(), kind="redacted", png=image, width=64, height=48, expires_at=expires
        )
        images[object_id] = image
    return images


def _file_digests(root: Path) -> dict[str, str]:
    return {entry.name: hashlib.sha256(entry.read_bytes()).hexdigest() for entry in sorted(root.iterdir())}


# ---- wrap, unwrap, rotate ---------------------------------------------------------------------------


def test_select_provider_wraps_and_unwraps_a_content_key_through_vault_transit(
    openbao: OpenBao, key_name: str, tmp_path: Path
) -> None:
    provider = select_provider(
        data_dir=tmp_path, vault_url=openbao.url, vault_token=openbao.token, vault_key_name=key_name
    )
    content_key = os.urandom(32)

    wrapped = provider.wrap(key=content_key)

    assert isinstance(provider, VaultTransitProvider)
    assert (wrapped.provider, wrapped.key_version) == ("vault-transit", 1)
    assert wrapped.blob.startswith(b"vault:v1:")
    assert content_key not in wrapped.blob
    assert provider.unwrap(wrapped=wrapped) == content_key


def test_rotation_bumps_the_transit_key_version_and_rewraps_without_losing_the_key(
    transit: VaultTransitProvider,
) -> None:
    content_key = os.urandom(32)
    old = transit.wrap(key=content_key)

    assert transit.rotate() == 2
    fresh = transit.rewrap(wrapped=old)

    assert transit.current_version == 2
    assert (fresh.key_version, fresh.blob[:9]) == (2, b"vault:v2:")
    assert transit.wrap(key=os.urandom(32)).key_version == 2
    assert transit.unwrap(wrapped=fresh) == content_key
    assert transit.unwrap(wrapped=old) == content_key  # the old version still decrypts


def test_a_tampered_ciphertext_is_a_decryption_error(transit: VaultTransitProvider) -> None:
    wrapped = transit.wrap(key=os.urandom(32))
    body = bytearray(wrapped.blob)
    body[12] = ord("A") if body[12] != ord("A") else ord("B")
    tampered = WrappedKey(provider=wrapped.provider, key_version=wrapped.key_version, blob=bytes(body))

    with pytest.raises(DecryptionError, match="could not unwrap the content key under version 1"):
        transit.unwrap(wrapped=tampered)


# ---- the capture vault: rotation and moving keys -------------------------------------------------------


async def test_capture_vault_rotation_rewraps_every_stored_object_to_the_new_transit_version(
    db: Sessions, transit: VaultTransitProvider, tmp_path: Path
) -> None:
    root = tmp_path / "objects"
    vault = ObjectVault(root, db, transit)
    images = await _store(vault, 3)
    files_before = _file_digests(root)
    assert {row[:2] for row in (await _rows(db)).values()} == {("vault-transit", 1)}

    report = await vault.rotate(batch_size=2)

    assert (report.previous_version, report.key_version, report.rewrapped, report.failed) == (1, 2, 3, 0)
    rows = await _rows(db)
    assert {row[:2] for row in rows.values()} == {("vault-transit", 2)}
    assert all(blob.startswith(b"vault:v2:") for _, _, blob in rows.values())
    assert _file_digests(root) == files_before
    for object_id, image in images.items():
        assert await vault.open_plain(object_id, "redacted") == image


async def test_keys_move_from_a_key_file_to_vault_transit_and_back(
    db: Sessions, transit: VaultTransitProvider, tmp_path: Path
) -> None:
    key_file = KeyFileProvider(tmp_path / "keys")
    vault = ObjectVault(tmp_path / "objects", db, key_file)
    images = await _store(vault, 3)

    to_vault = await vault.rotate(into=transit)

    assert (to_vault.provider, to_vault.key_version, to_vault.rewrapped, to_vault.failed) == (
        "vault-transit",
        2,
        3,
        0,
    )
    rows = await _rows(db)
    assert {row[:2] for row in rows.values()} == {("vault-transit", 2)}
    assert vault.provider is transit
    for object_id, image in images.items():
        assert await vault.open_plain(object_id, "redacted") == image

    back = await vault.rotate(into=key_file)

    assert (back.provider, back.key_version, back.rewrapped, back.failed) == ("keyfile", 2, 3, 0)
    assert {row[:2] for row in (await _rows(db)).values()} == {("keyfile", 2)}
    for object_id, image in images.items():
        assert await vault.open_plain(object_id, "redacted") == image


async def test_moving_keys_out_of_an_unreachable_vault_stops_with_a_sentence_and_changes_no_row(
    db: Sessions, openbao: OpenBao, transit: VaultTransitProvider, key_name: str, tmp_path: Path
) -> None:
    await _store(ObjectVault(tmp_path / "objects", db, transit), 2)
    before = await _rows(db)
    down = VaultTransitProvider(f"http://127.0.0.1:{free_port()}", openbao.token, key_name)
    vault = ObjectVault(tmp_path / "objects", db, down)

    with pytest.raises(MasterKeyUnavailableError, match="Vault cannot be reached"):
        await vault.rotate(into=KeyFileProvider(tmp_path / "keys"))

    assert await _rows(db) == before
    assert vault.provider is down


# ---- errors as sentences ------------------------------------------------------------------------------


def test_a_wrong_token_is_a_sentence_that_names_neither_token_nor_address(
    openbao: OpenBao, key_name: str
) -> None:
    wrong = "not-" + secrets.token_hex(8)
    provider = VaultTransitProvider(openbao.url, wrong, key_name)

    with pytest.raises(MasterKeyUnavailableError) as raised:
        provider.wrap(key=os.urandom(32))

    message = str(raised.value)
    assert message == (
        f"Vault refused the token for the transit key {key_name!r}; check the token and its policy"
    )
    assert wrong not in message and openbao.url not in message


def test_a_missing_key_is_a_sentence_and_wrap_does_not_create_it(openbao: OpenBao) -> None:
    missing = "kronii-missing-" + secrets.token_hex(4)
    provider = VaultTransitProvider(openbao.url, openbao.token, missing)
    sentence = (
        f"Vault has no transit key {missing!r} under the mount 'transit'; create it or fix the key name"
    )

    with pytest.raises(MasterKeyUnavailableError) as wrapping:
        provider.wrap(key=os.urandom(32))
    with pytest.raises(MasterKeyUnavailableError) as rotating:
        provider.rotate()

    assert str(wrapping.value) == str(rotating.value) == sentence
    # Transit's encrypt would have made the key on the fly (its upsert); the provider must not.
    with pytest.raises(hvac.exceptions.InvalidPath):
        openbao.client().secrets.transit.read_key(name=missing)


def test_unwrapping_under_a_missing_key_is_a_sentence(
    openbao: OpenBao, transit: VaultTransitProvider
) -> None:
    wrapped = transit.wrap(key=os.urandom(32))
    other = VaultTransitProvider(openbao.url, openbao.token, "kronii-missing-" + secrets.token_hex(4))

    with pytest.raises(MasterKeyUnavailableError, match=r"^Vault has no transit key"):
        other.unwrap(wrapped=wrapped)


def test_a_server_that_is_down_is_a_sentence(openbao: OpenBao, key_name: str) -> None:
    address = f"http://127.0.0.1:{free_port()}"
    provider = VaultTransitProvider(address, openbao.token, key_name)

    with pytest.raises(MasterKeyUnavailableError) as raised:
        _ = provider.current_version

    assert (
        str(raised.value) == "Vault cannot be reached; check that it is running and that its address is right"
    )


def test_a_sealed_vault_is_a_sentence(tmp_path: Path) -> None:
    # A server of its own: sealing the shared one would stop every other test.
    with running_openbao(tmp_path) as bao:
        client = bao.client()
        client.secrets.transit.create_key(name="kronii-sealed")
        provider = VaultTransitProvider(bao.url, bao.token, "kronii-sealed")
        wrapped = provider.wrap(key=os.urandom(32))
        client.sys.seal()

        with pytest.raises(MasterKeyUnavailableError) as raised:
            provider.unwrap(wrapped=wrapped)

    assert str(raised.value) == "Vault is sealed; unseal it before kronii can use its master key"
