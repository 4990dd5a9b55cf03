"""The key file provider on the real filesystem: permissions, persistence, rotation, clean errors."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from kronii.crypto import (
    CryptoError,
    DecryptionError,
    KeyFileError,
    KeyFileProvider,
    ProviderConfigError,
    VaultTransitProvider,
    open_sealed,
    rewrap,
    seal,
    select_provider,
)
from kronii.crypto.keyfile import KEY_FILE_NAME


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_creates_a_0700_directory_and_a_0600_key_file(key_dir: Path) -> None:
    assert not key_dir.exists()
    provider = KeyFileProvider(key_dir)

    assert _mode(key_dir) == 0o700
    assert _mode(key_dir / KEY_FILE_NAME) == 0o600
    assert provider.path == key_dir / KEY_FILE_NAME
    assert provider.current_version == 1


def test_rotation_keeps_the_file_0600(master: KeyFileProvider, key_dir: Path) -> None:
    master.rotate()
    assert _mode(key_dir / KEY_FILE_NAME) == 0o600
    assert not [p for p in key_dir.iterdir() if p.name.endswith(".tmp")]


def test_the_key_file_survives_a_restart(master: KeyFileProvider, key_dir: Path) -> None:
    sealed = seal(b"frame", master=master, associated_data=b"capture:1")
    master.rotate()
    reopened = KeyFileProvider(key_dir)
    assert reopened.current_version == 2
    assert open_sealed(sealed, master=reopened, associated_data=b"capture:1") == b"frame"


def test_a_rotation_by_another_process_is_seen(master: KeyFileProvider, key_dir: Path) -> None:
    other = KeyFileProvider(key_dir)
    other.rotate()
    sealed = seal(b"frame", master=other, associated_data=b"capture:1")
    assert sealed.wrapped_key.key_version == 2
    assert open_sealed(sealed, master=master, associated_data=b"capture:1") == b"frame"


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_refuses_a_key_file_readable_beyond_its_owner(
    master: KeyFileProvider, key_dir: Path, mode: int, caplog: pytest.LogCaptureFixture
) -> None:
    os.chmod(key_dir / KEY_FILE_NAME, mode)
    with caplog.at_level(logging.ERROR, logger="kronii.crypto"), pytest.raises(KeyFileError) as info:
        KeyFileProvider(key_dir)

    message = str(info.value)
    assert f"{mode:04o}" in message
    assert "0600" in message
    assert str(key_dir) not in message
    # The path goes to the local log line only.
    assert "chmod 600" in caplog.text
    assert str(key_dir) not in caplog.text, "log lines never name a filesystem path"


def test_refuses_a_directory_open_to_others(tmp_path: Path) -> None:
    directory = tmp_path / "shared"
    directory.mkdir(mode=0o755)
    os.chmod(directory, 0o755)  # noqa: S103 - the insecure mode is what this test refuses
    with pytest.raises(KeyFileError, match="0755") as info:
        KeyFileProvider(directory)
    assert str(tmp_path) not in str(info.value)


def test_refuses_a_symlinked_key_file(tmp_path: Path, key_dir: Path) -> None:
    KeyFileProvider(tmp_path / "elsewhere")
    key_dir.mkdir(mode=0o700)
    (key_dir / KEY_FILE_NAME).symlink_to(tmp_path / "elsewhere" / KEY_FILE_NAME)
    with pytest.raises(KeyFileError, match="symbolic link") as info:
        KeyFileProvider(key_dir)
    assert str(tmp_path) not in str(info.value)


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"not json",
        b'{"format": "other"}',
        b'{"format": "kronii-master-keys/v1", "versions": {"1": "c2hvcnQ="}}',
    ],
)
def test_refuses_a_corrupt_key_file(key_dir: Path, content: bytes) -> None:
    key_dir.mkdir(mode=0o700)
    fd = os.open(key_dir / KEY_FILE_NAME, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, content)
    os.close(fd)
    with pytest.raises(KeyFileError, match="corrupt") as info:
        KeyFileProvider(key_dir)
    assert str(key_dir) not in str(info.value)


def _flip_last_byte(data: bytes) -> bytes:
    """A tampered copy: always different (setting the byte to 0 left it alone 1 time in 256)."""
    return data[:-1] + bytes([data[-1] ^ 0x01])


def test_no_error_message_carries_a_path_or_key_material(master: KeyFileProvider, key_dir: Path) -> None:
    sealed = seal(b"frame", master=master, associated_data=b"capture:1")
    content_key = master.unwrap(wrapped=sealed.wrapped_key)
    master_key = (key_dir / KEY_FILE_NAME).read_bytes()
    messages: list[str] = []

    def collect(call: Callable[[], object]) -> None:
        with pytest.raises(CryptoError) as info:
            call()
        messages.append(str(info.value))

    collect(lambda: open_sealed(sealed, master=master, associated_data=b"capture:2"))
    collect(
        lambda: open_sealed(
            type(sealed)(ciphertext=_flip_last_byte(sealed.ciphertext), wrapped_key=sealed.wrapped_key),
            master=master,
            associated_data=b"capture:1",
        )
    )
    collect(
        lambda: master.unwrap(
            wrapped=type(sealed.wrapped_key)(provider="keyfile", key_version=1, blob=b"\x00" * 60)
        )
    )
    os.chmod(key_dir / KEY_FILE_NAME, 0o644)
    collect(lambda: KeyFileProvider(key_dir))
    os.chmod(key_dir / KEY_FILE_NAME, 0o600)
    os.chmod(key_dir, 0o750)  # noqa: S103 - the insecure mode is what this test refuses
    collect(lambda: KeyFileProvider(key_dir))
    os.chmod(key_dir, 0o700)

    assert len(messages) == 5
    for message in messages:
        assert "/" not in message, message
        assert str(key_dir) not in message
        assert content_key.hex() not in message
        assert master_key.decode() not in message


def test_decryption_error_is_a_crypto_error() -> None:
    assert issubclass(DecryptionError, CryptoError)
    assert issubclass(KeyFileError, CryptoError)


def test_select_provider_falls_back_to_a_key_file_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # No session bus at all: the Secret Service is not available, cleanly.
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    with caplog.at_level(logging.WARNING, logger="kronii.crypto"):
        provider = select_provider(data_dir=tmp_path / "data")

    assert isinstance(provider, KeyFileProvider)
    assert "master key: kept in master.key" in caplog.text
    assert "kronii keys migrate" in caplog.text
    assert KEY_FILE_NAME in caplog.text
    assert str(tmp_path) not in caplog.text, "log lines never name a filesystem path"
    sealed = seal(b"frame", master=provider, associated_data=b"capture:1")
    moved = rewrap(sealed.wrapped_key, provider)
    assert provider.unwrap(wrapped=moved) == provider.unwrap(wrapped=sealed.wrapped_key)


def test_select_provider_honours_opting_out_of_the_secret_service(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="kronii.crypto"):
        provider = select_provider(data_dir=tmp_path / "data", use_secret_service=False)
    assert isinstance(provider, KeyFileProvider)
    assert "master key: kept in master.key (use_secret_service is off)" in caplog.text


def test_select_provider_prefers_vault_when_configured(tmp_path: Path) -> None:
    # Construction only: no request is made until a key is wrapped.
    provider = select_provider(
        data_dir=tmp_path / "data",
        vault_url="http://127.0.0.1:1",
        vault_token="s.token",
        vault_key_name="kronii",
    )
    assert isinstance(provider, VaultTransitProvider)
    assert provider.name == "vault-transit"
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize(("url", "token"), [("http://127.0.0.1:1", None), (None, "s.token")])
def test_select_provider_fails_closed_on_half_a_vault_configuration(
    tmp_path: Path, url: str | None, token: str | None
) -> None:
    with pytest.raises(ProviderConfigError) as info:
        select_provider(data_dir=tmp_path / "data", vault_url=url, vault_token=token)
    assert "s.token" not in str(info.value)
    assert "127.0.0.1" not in str(info.value)
    assert not (tmp_path / "data").exists()
