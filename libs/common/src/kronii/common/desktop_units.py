"""kronii as a desktop daemon: a systemd user unit that runs `kronii up` with the graphical session
(restarted on failure, logging to journald), and an XDG autostart entry for sessions without a
systemd user manager. Both start the same `kronii up`; its single-instance lock makes a second
start say that one is running and exit, so having both never runs two."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path

__all__ = ["UNIT_NAME", "UnitFiles", "autostart_entry", "service_unit", "unit_enabled", "unit_files"]

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


def unit_enabled() -> bool:
    """Whether a systemd user manager runs the kronii unit in this session."""
    import shutil
    import subprocess

    if shutil.which("systemctl") is None:
        return False
    try:
        done = subprocess.run(
            ["systemctl", "--user", "-q", "is-enabled", UNIT_NAME],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0
