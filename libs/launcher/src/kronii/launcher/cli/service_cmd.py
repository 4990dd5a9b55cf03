"""`kronii service install|uninstall|status`: kronii as a desktop daemon (desktop_units.py)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import click
from kronii.launcher.cli.groups import SuggestingGroup

__all__ = ["service"]


def _kronii() -> str:
    """The absolute path of this `kronii`, so the unit runs the same installation."""
    here = Path(sys.argv[0])
    if here.name == "kronii" and here.exists():
        return str(here.resolve())
    found = shutil.which("kronii")
    return str(Path(found).resolve()) if found else str(Path(sys.executable).with_name("kronii"))


def _systemctl(*args: str) -> subprocess.CompletedProcess[str] | None:
    """`systemctl --user ...`, or None when there is no user manager to talk to."""
    from kronii.launcher.desktop_units import systemctl_user

    done = systemctl_user(*args)
    if done is None or "Failed to connect to bus" in done.stderr or "No medium found" in done.stderr:
        return None
    return done


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    print(f"wrote {path}")


def _install(*, no_autostart: bool, no_enable: bool, stop_agents: bool) -> int:
    from kronii.launcher.desktop_units import (
        UNIT_NAME,
        autostart_entry,
        service_unit,
        unit_files,
        user_manager_state,
    )

    files = unit_files()
    kronii = _kronii()
    # Asked before anything is written: `systemctl --user enable` links a unit even where no manager
    # runs, and a unit enabled that way would only make the autostart entry step aside for nothing.
    manager = None if no_enable else user_manager_state()
    if not no_enable and manager is None:
        return _install_autostart_only(files.autostart, kronii, no_autostart=no_autostart)
    _write(files.unit, service_unit(kronii, stop_agents=stop_agents))
    if not no_autostart:
        _write(files.autostart, autostart_entry(kronii))
    if no_enable:
        print(f"enable it with: systemctl --user enable --now {UNIT_NAME}")
        return 0
    return _enable_unit(UNIT_NAME, no_autostart=no_autostart)


def _install_autostart_only(autostart: Path, kronii: str, *, no_autostart: bool) -> int:
    """Where no systemd user manager runs: the desktop session's autostart entry alone, if allowed."""
    from kronii.launcher.desktop_units import autostart_entry

    if no_autostart:
        print(
            "kronii: service install: no systemd user manager runs in this session "
            "(`systemctl --user is-system-running`), and --no-autostart leaves nothing to start kronii: "
            "nothing installed; start it with `kronii up`",
            file=sys.stderr,
        )
        return 1
    _write(autostart, autostart_entry(kronii))
    print(
        "no systemd user manager runs in this session: installed the autostart entry only; "
        "it starts kronii with your next desktop session (`kronii service install` again in a "
        "session with a user manager adds the unit)"
    )
    return 0


def _enable_unit(unit: str, *, no_autostart: bool) -> int:
    """Enable and start the written unit; a unit that cannot be enabled is left disabled, and said so."""
    _systemctl("daemon-reload")
    enabled = _systemctl("enable", "--now", unit)
    if enabled is None or enabled.returncode != 0:
        reason = enabled.stderr.strip() if enabled is not None else "systemctl did not answer"
        _systemctl("disable", unit)  # nothing is left enabled that does not run
        fallback = "the autostart entry starts kronii with your next session" if not no_autostart else ""
        print(
            f"kronii: service install: cannot enable {unit} ({reason}); it is left disabled"
            + (f"; {fallback}" if fallback else ""),
            file=sys.stderr,
        )
        return 1
    print(f"enabled and started {unit}; its log: journalctl --user -u {unit} -f")
    return 0


def _uninstall() -> int:
    from kronii.launcher.desktop_units import UNIT_NAME, unit_files

    files = unit_files()
    if files.unit.exists():
        _systemctl("disable", "--now", UNIT_NAME)
    removed = [path for path in (files.unit, files.autostart) if path.exists()]
    for path in removed:
        path.unlink()
        print(f"removed {path}")
    if removed:
        _systemctl("daemon-reload")
    else:
        print("kronii is not installed as a service: nothing to remove")
    return 0


def _status(as_json: bool) -> int:
    import json

    from kronii.launcher.desktop_units import UNIT_NAME, unit_files, user_manager_state

    files = unit_files()
    running = user_manager_state() is not None
    active = _systemctl("is-active", UNIT_NAME) if running else None
    enabled = _systemctl("is-enabled", UNIT_NAME) if running else None
    state = {
        "unit": str(files.unit) if files.unit.exists() else None,
        "autostart": str(files.autostart) if files.autostart.exists() else None,
        "manager": running,
        "active": active.stdout.strip() if active is not None else None,
        "enabled": enabled.stdout.strip() if enabled is not None else None,
    }
    if as_json:
        print(json.dumps(state, indent=2))
        return 0
    print(f"user unit   {state['unit'] or 'not installed'}")
    print(f"autostart   {state['autostart'] or 'not installed'}")
    if not running:
        print("systemd     no user manager runs in this session: the autostart entry is what starts kronii")
    else:
        print(f"systemd     {state['enabled'] or 'unknown'}, {state['active'] or 'unknown'}")
    return 0


@click.group(
    "service",
    cls=SuggestingGroup,
    help="run kronii with your desktop session: a systemd user unit and an autostart entry",
)
def service() -> None:
    pass


@service.command("install", help="write the user unit and the autostart entry, and enable the unit")
@click.option("--no-autostart", is_flag=True, help="only the systemd user unit")
@click.option("--no-enable", is_flag=True, help="write the files, do not enable or start")
@click.option("--stop-agents", is_flag=True, help="the unit runs `kronii up --stop-agents`")
def service_install(no_autostart: bool, no_enable: bool, stop_agents: bool) -> None:
    raise SystemExit(_install(no_autostart=no_autostart, no_enable=no_enable, stop_agents=stop_agents))


@service.command("uninstall", help="stop and disable the unit, remove both files")
def service_uninstall() -> None:
    raise SystemExit(_uninstall())


@service.command("status", help="which files are installed, and the unit's state")
@click.option("--json", "as_json", is_flag=True, help="print JSON")
def service_status(as_json: bool) -> None:
    raise SystemExit(_status(as_json))
