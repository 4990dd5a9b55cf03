"""A real gnome-keyring-daemon (Secret Service) on a private session bus, with a private home."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import pytest
from kronii.crypto import SecretServiceProvider

from tests.desktop import start_session_bus, stop_process, wait_until


def _name_has_owner(address: str, name: str) -> bool:
    """org.freedesktop.DBus.NameHasOwner, which never activates a service."""
    reply = subprocess.run(
        [
            "dbus-send",
            f"--bus={address}",
            "--print-reply",
            "--dest=org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus.NameHasOwner",
            f"string:{name}",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=5.0,
    )
    return "boolean true" in reply.stdout


@pytest.fixture(scope="module")
def secret_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Start dbus-daemon and an unlocked gnome-keyring-daemon; yield the bus address.

    HOME and the XDG directories point into a temporary directory, both for the keyring daemon and
    for anything the bus activates, so the developer's own keyring is never touched.
    """
    root = tmp_path_factory.mktemp("keyring")
    home, runtime = root / "home", root / "run"
    home.mkdir(mode=0o700)
    runtime.mkdir(mode=0o700)
    private = {
        "HOME": str(home),
        "XDG_RUNTIME_DIR": str(runtime),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
    }
    with pytest.MonkeyPatch.context() as mp:
        for name, value in private.items():
            mp.setenv(name, value)
        with start_session_bus() as address:
            mp.setenv("DBUS_SESSION_BUS_ADDRESS", address)
            keyring = subprocess.Popen(
                ["gnome-keyring-daemon", "--foreground", "--components=secrets", "--unlock"],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=dict(os.environ),
                start_new_session=True,
            )
            try:
                assert keyring.stdin is not None
                # --unlock reads the login keyring's password up to EOF; an empty one creates no keyring.
                keyring.stdin.write(b"kronii-test-login-password")
                keyring.stdin.close()
                # Wait for our daemon to own the name before any Secret Service call: a call made
                # earlier would make the bus activate a second, locked daemon that takes the name.
                wait_until(
                    lambda: _name_has_owner(address, "org.freedesktop.secrets"),
                    timeout_s=10.0,
                    interval_s=0.05,
                    what="gnome-keyring-daemon on the bus",
                )
                wait_until(
                    SecretServiceProvider.available, timeout_s=10.0, interval_s=0.1, what="Secret Service"
                )
                yield address
            finally:
                stop_process(keyring, timeout_s=5.0)
