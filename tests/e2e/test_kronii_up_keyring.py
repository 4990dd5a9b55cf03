"""The first `kronii up` on a desktop whose gnome-keyring has no default keyring (issue 26, item 1).

A session bus where gnome-keyring-daemon is activatable, as on any GNOME-based desktop, with an empty
keyrings directory: asking it for a default collection would open gnome-keyring's "Choose password
for new keyring" dialog. `kronii up` must reach "kronii is up" without anyone answering anything, say
where the master key is kept and how to move it later, and no prompt window may appear.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from kronii.launcher.infra import free_port

from tests.desktop import stop_process, wait_until
from tests.infra import InfraUrls
from tests.mesh import Proc

pytestmark = pytest.mark.e2e


def _bus_call(address: str, method: str, name: str) -> str:
    reply = subprocess.run(
        ["dbus-send", f"--bus={address}", "--print-reply", "--dest=org.freedesktop.DBus",
         "/org/freedesktop/DBus", f"org.freedesktop.DBus.{method}", f"string:{name}"],
        capture_output=True, text=True, check=False, timeout=5.0,
    )  # fmt: skip
    return reply.stdout


@contextlib.contextmanager
def keyring_desktop_bus(root: Path, display: str) -> Iterator[tuple[str, dict[str, str]]]:
    """dbus-daemon --session whose activated services (gnome-keyring-daemon, its prompter) see a
    private HOME with no keyring at all, and the test's X display."""
    home = root / "home"
    (home / ".local" / "share" / "keyrings").mkdir(parents=True)
    runtime = root / "run"
    runtime.mkdir(mode=0o700)
    private = {
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_RUNTIME_DIR": str(runtime),
        "DISPLAY": display,
    }
    bus = subprocess.Popen(
        ["dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address"],
        env={**os.environ, **private},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    address = ""
    try:
        assert bus.stdout is not None
        address = bus.stdout.readline().strip()
        assert address, "dbus-daemon printed no address"
        yield address, private
    finally:
        keyring_pid = (
            _bus_call(address, "GetConnectionUnixProcessID", "org.freedesktop.secrets") if address else ""
        )
        stop_process(bus)
        with contextlib.suppress(ValueError, IndexError, ProcessLookupError):
            os.kill(int(keyring_pid.split()[-1]), signal.SIGTERM)


def _prompt_windows(display: str) -> list[str]:
    found = subprocess.run(
        ["xdotool", "search", "--class", "gcr-prompter|Gcr-prompter"],
        env={**os.environ, "DISPLAY": display}, capture_output=True, text=True, check=False,
    )  # fmt: skip
    return found.stdout.split()


def test_first_kronii_up_with_an_activatable_keyring_without_a_default_keyring_is_up_and_names_the_key_file(
    xdisplay: str, infra: InfraUrls, migrated_database: str, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    with keyring_desktop_bus(tmp_path / "desktop", xdisplay) as (address, private):
        activatable = subprocess.run(
            ["dbus-send", f"--bus={address}", "--print-reply", "--dest=org.freedesktop.DBus",
             "/org/freedesktop/DBus", "org.freedesktop.DBus.ListActivatableNames"],
            capture_output=True, text=True, check=True, timeout=5.0,
        ).stdout  # fmt: skip
        assert '"org.freedesktop.secrets"' in activatable, "gnome-keyring must be activatable on this bus"
        env = {**os.environ, **infra.env(), **private}
        env.update(
            KRONII_DATABASE_URL=migrated_database,
            KRONII_DATA_DIR=str(data_dir),
            DBUS_SESSION_BUS_ADDRESS=address,
            DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-system-bus",
            KRONII_SENSOR_HTTP_PORT=str(free_port()),
            KRONII_SENSOR_GRPC_PORT=str(free_port()),
            KRONII_LOG_FORMAT="text",
        )
        env.pop("KRONII_CAPTURE_USE_SECRET_SERVICE", None)
        proc = Proc([str(Path(sys.executable).parent / "kronii"), "up"], env)
        try:
            # Nobody answers anything: no dialog is up to answer.
            proc.wait_for_line(lambda line: line.strip() == "kronii is up", 90)
            kept = [line for line in proc.lines if "master key: kept in" in line]
            assert kept, proc.output[-4000:]
            assert "capture/keys/master.key under the data directory" in kept[0]
            assert "the Secret Service has no default keyring" in kept[0]
            assert "`kronii keys migrate`" in kept[0]
            assert (data_dir / "capture" / "keys" / "master.key").is_file()
            # The keyring was really there and asked (activated), and it opened no prompt.
            wait_until(
                lambda: "boolean true" in _bus_call(address, "NameHasOwner", "org.freedesktop.secrets"),
                timeout_s=5.0,
                what="gnome-keyring-daemon activated on the bus",
            )
            assert _prompt_windows(xdisplay) == []
            assert "boolean false" in _bus_call(address, "NameHasOwner", "org.gnome.keyring.SystemPrompter")
            assert "boolean false" in _bus_call(address, "NameHasOwner", "org.gnome.keyring.PrivatePrompter")
            code, _ = proc.terminate(timeout=30)
            assert code == 0, proc.output[-3000:]
        finally:
            if proc.process.poll() is None:
                proc.kill()
