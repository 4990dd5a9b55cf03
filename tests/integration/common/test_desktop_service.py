"""`kronii service install|uninstall|status` as a person runs it: the systemd user unit passes
`systemd-analyze verify`, the autostart entry passes `desktop-file-validate`, both run this kronii,
and uninstall leaves nothing. Where the machine has a user manager, the unit is enabled for real."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

KRONII = str(Path(sys.executable).with_name("kronii"))


def kronii(config_home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CONFIG_HOME": str(config_home)}
    return subprocess.run([KRONII, "service", *args], capture_output=True, text=True, timeout=60, env=env)


def test_install_writes_a_unit_systemd_accepts_and_an_autostart_entry(tmp_path: Path) -> None:
    if shutil.which("systemd-analyze") is None:
        pytest.fail("systemd-analyze is missing: `make sysdeps` installs it (Debian package `systemd`)")
    home = tmp_path / "config"
    installed = kronii(home, "install", "--no-enable")
    assert installed.returncode == 0, installed.stderr
    unit = home / "systemd" / "user" / "kronii.service"
    autostart = home / "autostart" / "kronii.desktop"
    assert f"wrote {unit}" in installed.stdout and f"wrote {autostart}" in installed.stdout
    text = unit.read_text()
    assert f"ExecStart={Path(KRONII).resolve()} up\n" in text
    assert "Restart=on-failure" in text and "StandardOutput=journal" in text and "KillMode=mixed" in text
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    verified = subprocess.run(
        ["systemd-analyze", "verify", "--user", str(unit)], capture_output=True, text=True, timeout=60,
        env={**os.environ, "XDG_RUNTIME_DIR": str(runtime), "XDG_CONFIG_HOME": str(home)},
    )  # fmt: skip
    assert verified.returncode == 0 and verified.stderr.strip() == "", verified.stderr
    if shutil.which("desktop-file-validate"):
        validated = subprocess.run(["desktop-file-validate", str(autostart)], capture_output=True, text=True)
        assert validated.returncode == 0 and validated.stdout.strip() == "", validated.stdout
    assert f"Exec={Path(KRONII).resolve()} up --autostart\n" in autostart.read_text()


def test_a_unit_that_systemd_would_not_accept_is_caught_by_the_check(tmp_path: Path) -> None:
    """The verify step really reads the unit: a bad restart value makes it complain."""
    if shutil.which("systemd-analyze") is None:
        pytest.fail("systemd-analyze is missing: `make sysdeps` installs it (Debian package `systemd`)")
    from kronii.launcher.desktop_units import service_unit

    unit = tmp_path / "kronii.service"
    unit.write_text(
        service_unit(str(Path(KRONII).resolve())).replace("Restart=on-failure", "Restart=sometimes")
    )
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    verified = subprocess.run(
        ["systemd-analyze", "verify", "--user", str(unit)], capture_output=True, text=True, timeout=60,
        env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)},
    )  # fmt: skip
    assert "Failed to parse service restart specifier" in verified.stderr


def test_stop_agents_and_no_autostart_are_honoured_and_uninstall_leaves_nothing(tmp_path: Path) -> None:
    home = tmp_path / "config"
    assert kronii(home, "install", "--no-enable", "--no-autostart", "--stop-agents").returncode == 0
    assert (home / "systemd" / "user" / "kronii.service").read_text().count(" up --stop-agents\n") == 1
    assert not (home / "autostart" / "kronii.desktop").exists()
    status = json.loads(kronii(home, "status", "--json").stdout)
    assert status["unit"] == str(home / "systemd" / "user" / "kronii.service") and status["autostart"] is None
    removed = kronii(home, "uninstall")
    assert removed.returncode == 0 and "removed" in removed.stdout
    assert not any(home.rglob("kronii*"))
    again = kronii(home, "uninstall")
    assert "nothing to remove" in again.stdout


def _without_user_manager(config_home: Path) -> dict[str, str]:
    """A session without a systemd user manager: nothing to reach one by (as in a desktop started
    without systemd, or a container)."""
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS")}
    return {**env, "XDG_CONFIG_HOME": str(config_home)}


def test_install_without_a_user_manager_enables_nothing_and_installs_the_autostart_entry(
    tmp_path: Path,
) -> None:
    home = tmp_path / "config"
    env = _without_user_manager(home)
    installed = subprocess.run(
        [KRONII, "service", "install"], capture_output=True, text=True, timeout=60, env=env
    )
    assert installed.returncode == 0, installed.stderr
    assert (
        "no systemd user manager runs in this session: installed the autostart entry only" in installed.stdout
    )
    assert (home / "autostart" / "kronii.desktop").exists()
    assert not (home / "systemd").exists(), "no unit written, none linked to start with a session"
    status = json.loads(
        subprocess.run(
            [KRONII, "service", "status", "--json"], capture_output=True, text=True, env=env
        ).stdout
    )
    assert status["manager"] is False and status["unit"] is None

    nothing = subprocess.run(
        [KRONII, "service", "install", "--no-autostart"], capture_output=True, text=True, timeout=60, env=env
    )
    assert nothing.returncode == 1 and "nothing installed" in nothing.stderr
    assert not (home / "systemd").exists()


def test_the_autostart_entry_starts_kronii_where_a_unit_is_enabled_but_no_user_manager_runs(
    tmp_path: Path,
) -> None:
    """A unit linked with `systemctl --user enable` where no manager runs (what an older kronii left):
    `kronii up --autostart` must not step aside for it, or kronii never starts in this session."""
    from tests.mesh import Proc, standalone_env

    home = tmp_path / "config"
    env = {**_without_user_manager(home), **standalone_env(tmp_path / "data"), "XDG_CONFIG_HOME": str(home)}
    env = {k: v for k, v in env.items() if k not in ("XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS")}
    assert kronii(home, "install", "--no-enable").returncode == 0
    linked = subprocess.run(
        ["systemctl", "--user", "enable", "kronii.service"],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
    )
    enabled = subprocess.run(
        ["systemctl", "--user", "is-enabled", "kronii.service"], capture_output=True, text=True, env=env
    )
    assert linked.returncode == 0 and enabled.stdout.strip() == "enabled", linked.stderr + enabled.stdout
    entry = (home / "autostart" / "kronii.desktop").read_text()
    command = next(line for line in entry.splitlines() if line.startswith("Exec=")).removeprefix("Exec=")
    proc = Proc(command.split(), env)
    try:
        first = proc.wait_for_line(lambda line: bool(line.strip()), 60)
        assert "runs kronii" not in first and "(embedded)" in first, proc.output
    finally:
        proc.terminate(timeout=30)
