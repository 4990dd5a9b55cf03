"""kronii on a real GNOME (gnome-shell 43, headless, tests/gnome.py): `kronii gnome-extension install`
into a fresh home, the shell started on it, the extension enabled and owning org.kronii.Shell1; the
sensor's GnomeDisplay told each focused GTK window (gnome-calculator, GTK4; galculator, GTK3) with its
app id, title and pid; idle from mutter's IdleMonitor; and without the extension, the sentence that says
how to install it, in the adapter and in `kronii doctor`.

Focus is switched the way a person's session does it without input devices: a newly opened window takes
the focus, and closing it gives the focus back to the window below (a headless shell has no seat to
click with, and org.gnome.Shell.Eval is closed outside unsafe mode)."""

from __future__ import annotations

import json
import os
import queue
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kronii.desktop.session import GNOME_EXTENSION_MISSING, probe
from kronii.sensor.adapters.gnome import GnomeDisplay
from kronii.sensor.core.model import Focus

from tests.desktop import stop_process
from tests.gnome import GnomeSession, gnome_home, start_gnome_shell

KRONII = str(Path(sys.executable).with_name("kronii"))
UUID = "kronii-focus@kronii.dev"


def kronii(session: GnomeSession, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KRONII, *args], env=session.env(), capture_output=True, text=True, timeout=60)


def wait_for(check: object, timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if callable(check) and check():
            return
        time.sleep(0.1)
    raise TimeoutError("the condition did not hold in time")


@pytest.fixture
def gnome_with_extension() -> Iterator[GnomeSession]:
    with gnome_home() as session:
        installed = kronii(session, "gnome-extension", "install")
        assert installed.returncode == 0, installed.stderr
        session.start()
        wait_for(lambda: session.name_has_owner("org.kronii.Shell1"))
        session.hide_overview()
        yield session


def test_install_copies_and_enables_the_extension_which_owns_its_bus_name_once_the_shell_starts() -> None:
    with gnome_home() as session:
        installed = kronii(session, "gnome-extension", "install")
        assert installed.returncode == 0, installed.stderr
        assert "only at the next login" in installed.stdout
        target = session.home / ".local/share/gnome-shell/extensions" / UUID
        assert stat.S_IMODE(target.stat().st_mode) == 0o755
        for name in ("metadata.json", "extension.js"):
            assert stat.S_IMODE((target / name).stat().st_mode) == 0o644
        before = kronii(session, "gnome-extension", "status")
        assert before.returncode == 1 and "running: no" in before.stdout, before.stdout + before.stderr

        session.start()
        wait_for(lambda: session.name_has_owner("org.kronii.Shell1"))
        listed = session.gdbus_call(
            "org.gnome.Shell", "/org/gnome/Shell", "org.gnome.Shell.Extensions.GetExtensionInfo", UUID
        )
        assert "'state': <1.0>" in listed and "'error': <''>" in listed  # 1: ENABLED, and loaded cleanly
        after = kronii(session, "gnome-extension", "status")
        assert after.returncode == 0, after.stdout + after.stderr
        assert "installed: yes" in after.stdout and "enabled: yes\n" in after.stdout
        assert "running: yes" in after.stdout


def _next_focus(focuses: queue.Queue[Focus], app: str, timeout_s: float = 20.0) -> Focus:
    deadline = time.monotonic() + timeout_s
    while True:
        focus = focuses.get(timeout=max(0.1, deadline - time.monotonic()))
        if focus.app_name == app:
            return focus


def test_gnome_display_is_told_each_focused_window_with_its_app_id_title_and_pid(
    gnome_with_extension: GnomeSession,
) -> None:
    session = gnome_with_extension
    display = GnomeDisplay(probe(session.env()), address=session.session_bus)
    focuses: queue.Queue[Focus] = queue.Queue()
    try:
        assert display.problem == ""
        display.start(focuses.put)
        calculator = session.open(["gnome-calculator"])
        first = _next_focus(focuses, "org.gnome.Calculator")
        assert (first.title, first.pid, first.wm_class) == (
            "Calculator",
            calculator.pid,
            "org.gnome.Calculator",
        )
        assert first.window_id != 0 and first.app_start_time_ms > 0 and first.prompt == ""

        galculator = session.open(["galculator"])
        second = _next_focus(focuses, "galculator")
        assert (second.title, second.pid) == ("galculator", galculator.pid)
        assert second.window_id != first.window_id

        stop_process(galculator)  # the window below takes the focus back
        again = _next_focus(focuses, "org.gnome.Calculator")
        assert (again.window_id, again.pid) == (first.window_id, calculator.pid)
    finally:
        display.close()


def test_idle_time_from_mutter_grows_without_input(gnome_with_extension: GnomeSession) -> None:
    display = GnomeDisplay(probe(gnome_with_extension.env()), address=gnome_with_extension.session_bus)
    try:
        assert display.has_idle
        first = display.idle_ms()
        time.sleep(1.5)
        second = display.idle_ms()
        assert second - first >= 1300, (first, second)
    finally:
        display.close()


def test_without_the_extension_the_adapter_and_doctor_say_how_to_install_it() -> None:
    with start_gnome_shell() as session:
        facts = probe(session.env())
        assert (facts.family, facts.gnome_extension) == ("gnome", False)
        display = GnomeDisplay(facts, address=session.session_bus)
        try:
            assert GNOME_EXTENSION_MISSING in display.problem
            focuses: queue.Queue[Focus] = queue.Queue()
            display.start(focuses.put)  # subscribes and asks; no extension answers, and nothing breaks
            assert focuses.empty()
            assert display.idle_ms() >= 0  # idle needs no extension
        finally:
            display.close()
        doctor = kronii(session, "doctor", "--json")
        assert doctor.returncode == 1, doctor.stderr
        rows = {(row["agent"], row["capability"]): row for row in json.loads(doctor.stdout)["capabilities"]}
        focus = rows[("sensor", "focus")]
        assert not focus["works"] and GNOME_EXTENSION_MISSING in focus["detail"]
        assert rows[("sensor", "idle")]["works"]
        assert "kronii gnome-extension install" in focus["detail"]


def test_uninstall_removes_the_extension_and_takes_it_out_of_the_enabled_list() -> None:
    with gnome_home() as session:
        assert kronii(session, "gnome-extension", "install").returncode == 0
        removed = kronii(session, "gnome-extension", "uninstall")
        assert removed.returncode == 0, removed.stderr
        assert not (session.home / ".local/share/gnome-shell/extensions" / UUID).exists()
        enabled = subprocess.run(
            ["gsettings", "get", "org.gnome.shell", "enabled-extensions"],
            env=session.env(), capture_output=True, text=True, timeout=10, check=True,
        )  # fmt: skip
        assert UUID not in enabled.stdout
        missing = kronii(session, "gnome-extension", "status")
        assert missing.returncode == 3 and "not installed" in missing.stderr + missing.stdout
        assert kronii(session, "gnome-extension", "uninstall").returncode == 3


def test_a_title_change_of_the_focused_window_reaches_the_gnome_display(
    gnome_with_extension: GnomeSession, tmp_path: Path
) -> None:
    session = gnome_with_extension
    go = tmp_path / "go"
    os.mkfifo(go)
    # foot (a Wayland terminal) sets its title from the OSC 2 sequence its shell prints, once told to.
    script = f"read x < '{go}'; printf '\\033]2;second title\\007'; sleep 600"
    display = GnomeDisplay(probe(session.env()), address=session.session_bus)
    focuses: queue.Queue[Focus] = queue.Queue()
    try:
        display.start(focuses.put)
        terminal = session.open(
            ["foot", "--app-id", "title-test", "--title", "first title", "sh", "-c", script]
        )
        first = _next_focus(focuses, "title-test")
        assert (first.title, first.pid) == ("first title", terminal.pid)
        go.write_text("\n")
        changed = _next_focus(focuses, "title-test")
        assert (changed.title, changed.window_id) == ("second title", first.window_id)
    finally:
        display.close()


def test_the_sensor_opens_the_gnome_display_on_a_gnome_session(
    gnome_with_extension: GnomeSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    from types import SimpleNamespace

    from kronii.sensor.app import _open_display
    from kronii.sensor.metrics import SensorMetrics
    from kronii.sensor.settings import SensorSettings
    from prometheus_client import CollectorRegistry

    for name, value in gnome_with_extension.env().items():
        monkeypatch.setenv(name, value)
    metrics = SensorMetrics(SimpleNamespace(registry=CollectorRegistry()))  # type: ignore[arg-type]
    watch = _open_display(SensorSettings(), metrics)
    try:
        assert isinstance(watch.source, GnomeDisplay) and watch.problem == ""
        assert watch.read_idle() is not None
    finally:
        if watch.source is not None:
            watch.source.close()


def test_installed_into_a_running_shell_it_is_enabled_for_the_next_login_and_not_yet_running() -> None:
    with start_gnome_shell() as session:
        installed = kronii(session, "gnome-extension", "install")
        assert installed.returncode == 0, installed.stderr
        assert "enabled in GSettings" in installed.stdout and "only at the next login" in installed.stdout
        status = kronii(session, "gnome-extension", "status")
        assert status.returncode == 1 and "enabled: yes" in status.stdout and "running: no" in status.stdout


def test_uninstall_in_a_running_shell_disables_the_extension_which_gives_up_its_bus_name(
    gnome_with_extension: GnomeSession,
) -> None:
    session = gnome_with_extension
    removed = kronii(session, "gnome-extension", "uninstall")
    assert removed.returncode == 0, removed.stderr
    wait_for(lambda: not session.name_has_owner("org.kronii.Shell1"))
    # and the object is no longer exported: the shell's own connection no longer answers at its path
    shell = session.gdbus_call(
        "org.freedesktop.DBus",
        "/org/freedesktop/DBus",
        "org.freedesktop.DBus.GetNameOwner",
        "org.gnome.Shell",
    ).strip("(',)")
    with pytest.raises(RuntimeError, match=r"UnknownMethod|UnknownObject|UnknownInterface"):
        session.gdbus_call(shell, "/org/kronii/Shell1", "org.kronii.Shell1.GetFocus")


def test_install_takes_the_extension_out_of_the_disabled_list_and_says_when_user_extensions_are_off() -> None:
    with gnome_home() as session:
        for key, value in (("disabled-extensions", f"['{UUID}']"), ("disable-user-extensions", "true")):
            subprocess.run(
                ["gsettings", "set", "org.gnome.shell", key, value], env=session.env(), check=True, timeout=10
            )
        installed = kronii(session, "gnome-extension", "install")
        assert installed.returncode == 0, installed.stderr
        assert "disable-user-extensions" in installed.stdout
        disabled = subprocess.run(
            ["gsettings", "get", "org.gnome.shell", "disabled-extensions"],
            env=session.env(), capture_output=True, text=True, timeout=10, check=True,
        )  # fmt: skip
        assert UUID not in disabled.stdout
        status = kronii(session, "gnome-extension", "status")
        assert "enabled: yes (GNOME has user extensions turned off" in status.stdout
