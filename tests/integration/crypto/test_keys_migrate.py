"""`kronii keys migrate` against a real gnome-keyring-daemon on a private session bus: the key file's
master keys move into the unlocked default keyring, images sealed under them stay readable, and a
locked keyring is a clear error (exit 4) that keeps the key file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import secretstorage
from kronii.crypto import KeyFileProvider, choose_master_key, open_sealed, seal
from secretstorage.util import format_secret, open_session

KRONII = str(Path(sys.executable).parent / "kronii")


def _keys(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KRONII_DATA_DIR": str(data_dir)}
    env.pop("KRONII_CAPTURE_USE_SECRET_SERVICE", None)
    return subprocess.run(
        [KRONII, "keys", *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_keys_migrate_moves_the_key_file_into_the_unlocked_keyring(
    secret_service: str, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    key_dir = data_dir / "capture" / "keys"
    key_file = KeyFileProvider(key_dir)
    key_file.rotate()
    sealed = seal(b"an image", master=key_file, associated_data=b"capture:obj1")

    done = _keys(data_dir, "migrate")

    assert done.returncode == 0, done.stderr
    assert f"moved from {key_dir / 'master.key'} into the Secret Service's default keyring" in done.stdout
    assert "(version 1, 2)" in done.stdout
    assert not (key_dir / "master.key").exists()
    choice = choose_master_key(data_dir=key_dir)
    assert choice.store == "secret-service"
    assert open_sealed(sealed, master=choice.provider, associated_data=b"capture:obj1") == b"an image"
    again = _keys(data_dir, "migrate")
    assert again.returncode == 0 and "nothing to move" in again.stdout


def _unlock_without_prompt(password: bytes) -> None:
    """gnome-keyring's own unlock-with-password call (what its login integration uses): no prompt."""
    connection = secretstorage.dbus_init()
    try:
        session = open_session(connection)
        internal = secretstorage.util.DBusAddressWrapper(
            "/org/freedesktop/secrets",
            "org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface",
            connection,
        )
        (path,) = secretstorage.util.DBusAddressWrapper(
            "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", connection
        ).call("ReadAlias", "s", "default")
        internal.call(
            "UnlockWithMasterPassword", "o(oayays)", path, format_secret(session, password, "text/plain")
        )
    finally:
        connection.close()


def test_keys_migrate_into_a_locked_keyring_exits_4_and_keeps_the_key_file(
    secret_service: str, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    key_dir = data_dir / "capture" / "keys"
    KeyFileProvider(key_dir)
    before = (key_dir / "master.key").read_bytes()
    connection = secretstorage.dbus_init()
    try:
        secretstorage.get_default_collection(connection).lock()
    finally:
        connection.close()
    try:
        refused = _keys(data_dir, "migrate")
        assert refused.returncode == 4, (refused.stdout, refused.stderr)
        assert "the Secret Service's default keyring is locked" in refused.stderr
        assert "kronii keys migrate" in refused.stderr
        assert (key_dir / "master.key").read_bytes() == before
    finally:
        _unlock_without_prompt(b"kronii-test-login-password")
    assert _keys(data_dir, "migrate").returncode == 0
    assert not (key_dir / "master.key").exists()
