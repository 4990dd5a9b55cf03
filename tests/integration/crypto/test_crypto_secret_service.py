"""SecretServiceProvider against a real gnome-keyring-daemon on a private session bus."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import secretstorage
from kronii.crypto import SecretServiceProvider, open_sealed, rewrap, seal, select_provider


@pytest.fixture
def application(secret_service: str) -> str:
    """A distinct application attribute per test, so each starts without master keys."""
    return f"kronii-test-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def provider(application: str) -> Iterator[SecretServiceProvider]:
    p = SecretServiceProvider(application=application)
    yield p
    p.close()


def _stored_versions(application: str) -> list[int]:
    connection = secretstorage.dbus_init()
    try:
        collection = secretstorage.get_default_collection(connection)
        items = collection.search_items({"xdg:schema": "io.kronii.MasterKey", "application": application})
        return sorted(int(item.get_attributes()["version"]) for item in items)
    finally:
        connection.close()


def test_available_with_a_running_keyring(secret_service: str) -> None:
    assert SecretServiceProvider.available()


def test_first_use_stores_a_master_key_in_the_default_collection(
    provider: SecretServiceProvider, application: str
) -> None:
    assert provider.name == "secret-service"
    assert provider.current_version == 1
    assert _stored_versions(application) == [1]


def test_seal_and_open_through_the_keyring(provider: SecretServiceProvider, application: str) -> None:
    sealed = seal(b"redacted frame", master=provider, associated_data=b"capture:1")
    assert sealed.wrapped_key.provider == "secret-service"
    assert open_sealed(sealed, master=provider, associated_data=b"capture:1") == b"redacted frame"

    # A new connection (another process, a restart) reads the same master key back.
    again = SecretServiceProvider(application=application)
    try:
        assert open_sealed(sealed, master=again, associated_data=b"capture:1") == b"redacted frame"
    finally:
        again.close()


def test_rotation_keeps_old_objects_readable_and_rewrap_moves_them(
    provider: SecretServiceProvider, application: str
) -> None:
    old = seal(b"raw frame", master=provider, associated_data=b"capture:old")

    assert provider.rotate() == 2
    assert _stored_versions(application) == [1, 2]
    assert open_sealed(old, master=provider, associated_data=b"capture:old") == b"raw frame"

    moved_key = rewrap(old.wrapped_key, provider)
    assert moved_key.key_version == 2
    moved = type(old)(ciphertext=old.ciphertext, wrapped_key=moved_key)
    assert open_sealed(moved, master=provider, associated_data=b"capture:old") == b"raw frame"

    # Another process that loaded before the rotation still unwraps the new version.
    other = SecretServiceProvider(application=application)
    try:
        assert other.current_version == 2
        assert open_sealed(moved, master=other, associated_data=b"capture:old") == b"raw frame"
    finally:
        other.close()


def test_select_provider_prefers_the_secret_service(
    secret_service: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="kronii.crypto"):
        provider = select_provider(data_dir=tmp_path / "data")
    assert isinstance(provider, SecretServiceProvider)
    provider.close()
    assert "stored in a file" not in caplog.text
    assert not (tmp_path / "data").exists()
