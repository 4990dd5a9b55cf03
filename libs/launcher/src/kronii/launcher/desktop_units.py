"""kronii as a desktop daemon: a systemd user unit that runs `kronii up` with the graphical session
(restarted on failure, logging to journald), and an XDG autostart entry for sessions without a
systemd user manager. Both start the same `kronii up`; its single-instance lock makes a second
start say that one is running and exit, so having both never runs two.

Whether a user manager runs is asked of it (`systemctl --user is-system-running`), never read from the
unit files: `systemctl --user enable` links a unit even where no manager runs (and would never start it),
so "enabled" alone says nothing about what starts kronii in this session."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "UNIT_NAME",
    "UnitFiles",
    "autostart_entry",
    "service_unit",
    "systemctl_user",
    "unit_files",
    "unit_runs_kronii",
    "user_manager_state",
]

UNIT_NAME = "kronii.service"


@dataclass(frozen=True)
class UnitFiles:
    unit: Path
    autostart: Path


def unit_files(config_home: Path | None = None) -> UnitFiles:
    base = config_home or Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return UnitFiles(base / "systemd" / "user" / UNIT_NAME, base / "autostart" / "kronii.desktop")


def service_unit(kronii: str, *, stop_agents: bool = False) -> str:
    """The user unit. The session's DISPLAY and D-Bus address reach it through the session's
    `systemctl --user import-environment` (done by GNOME, KDE and most session scripts)."""
    command = shlex.join([kronii, "up", *(["--stop-agents"] if stop_agents else [])])
    return f"""[Unit]
Description=kronii: privacy-first context engine and agent supervisor
After=graphical-session.target
PartOf=graphical-session.target

[Service]
Type=simple
ExecStart={command}
# kronii up stops its services and servers within 10 s of SIGTERM; the rest is slack.
KillMode=mixed
TimeoutStopSec=20
Restart=on-failure
RestartSec=5
Environment=PYTHONUNBUFFERED=1 KRONII_LOG_FORMAT=json
StandardOutput=journal
StandardError=journal
SyslogIdentifier=kronii

[Install]
WantedBy=graphical-session.target
"""


def autostart_entry(kronii: str) -> str:
    """The autostart entry; `kronii up --autostart` steps aside where the user unit is enabled."""
    return f"""[Desktop Entry]
Type=Application
Name=kronii
Comment=Privacy-first context engine and agent supervisor
Exec={kronii} up --autostart
TryExec={kronii}
Terminal=false
NoDisplay=true
X-GNOME-Autostart-enabled=true
"""


# What `systemctl --user is-system-running` prints when a user manager runs (it prints "offline" or
# fails to connect when none does).
_MANAGER_STATES = ("initializing", "starting", "running", "degraded", "maintenance", "stopping")


def systemctl_user(*args: str, timeout: float = 15.0) -> subprocess.CompletedProcess[str] | None:
    """`systemctl --user ...`, or None when systemctl is missing or does not answer."""
    if shutil.which("systemctl") is None:
        return None
    try:
        return subprocess.run(
            ["systemctl", "--user", *args], capture_output=True, text=True, timeout=timeout, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def user_manager_state() -> str | None:
    """The state of this session's systemd user manager ("running", "degraded"...), None when none runs."""
    done = systemctl_user("is-system-running", timeout=10)
    state = done.stdout.strip() if done is not None else ""
    return state if state in _MANAGER_STATES else None


def unit_runs_kronii() -> str | None:
    """Why the kronii unit runs kronii in this session (a sentence), or None when nothing but the caller
    would: no user manager runs, or the unit is neither running nor due to start with this session."""
    if user_manager_state() is None:
        return None
    active = systemctl_user("is-active", UNIT_NAME, timeout=10)
    if active is not None and active.stdout.strip() in ("active", "activating", "reloading"):
        return f"the {UNIT_NAME} user unit runs kronii in this session"
    enabled = systemctl_user("is-enabled", UNIT_NAME, timeout=10)
    session = systemctl_user("is-active", "graphical-session.target", timeout=10)
    if (
        enabled is not None
        and enabled.stdout.strip() == "enabled"
        and session is not None
        and session.stdout.strip() in ("active", "activating")
    ):
        return f"the {UNIT_NAME} user unit is enabled and starts kronii with this graphical session"
    return None
