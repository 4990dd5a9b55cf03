"""`kronii gnome-extension install|status|uninstall`: kronii's GNOME Shell extension, which publishes the
focused window on the session bus (org.kronii.Shell1) because GNOME lets no other program read it.

- `install`: copies the extension (shipped in kronii.desktop, in the form this GNOME Shell loads: the
  legacy `init()` form for 43 and 44, the ES-module form for 45 and later) to
  ~/.local/share/gnome-shell/extensions/<uuid>/ and enables it: through the running shell
  (org.gnome.Shell.Extensions.EnableExtension, what `gnome-extensions enable` calls) when it answers and
  knows the extension, else in GSettings (org.gnome.shell enabled-extensions). On Wayland GNOME reads a
  new extension only at the next login.
- `status`: installed, enabled, running (its bus name owned).
- `uninstall`: disabled, taken out of enabled-extensions, and removed.

Exit codes (kronii.launcher.cli.exits): 0 done (status: running); 1 failed (status: installed but not
running); 3 not installed; 5 GSettings cannot be written (no gsettings or no session bus).

Only click and the standard library load here; dbus-fast only when the shell is asked."""

from __future__ import annotations

import ast
import asyncio
import importlib.resources
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import click
from kronii.launcher.cli import exits
from kronii.launcher.cli.exits import CommandError

__all__ = ["UUID", "extension_dir", "form_for", "gnome_extension_command"]

UUID = "kronii-focus@kronii.dev"
_SCHEMA = "org.gnome.shell"
_KEY = "enabled-extensions"
_DISABLED_KEY = "disabled-extensions"  # wins over enabled-extensions: kept free of ours
_ALL_OFF = (
    "GNOME has user extensions turned off (org.gnome.shell disable-user-extensions): turn them on in the "
    "Extensions app, or with `gsettings set org.gnome.shell disable-user-extensions false`"
)
_LOGIN = (
    "On Wayland GNOME loads a new extension only at the next login: log out and in, then check with "
    "`kronii gnome-extension status`."
)


def extension_dir() -> Path:
    """Where GNOME reads this user's extension: $XDG_DATA_HOME (default ~/.local/share)/gnome-shell/extensions."""
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "gnome-shell" / "extensions" / UUID


def form_for(version: str) -> str:
    """The shipped form for `gnome-shell --version`'s text ("GNOME Shell 43.9"): the folder under
    kronii.desktop.gnome_extension holding the extension ("" for 43 and 44, "esm" for 45 and later)."""
    match = re.search(r"(\d+)(?:\.\S*)?\s*$", version.strip())
    if match is None:
        raise CommandError(f"cannot read GNOME Shell's version from {version.strip()!r}", exits.FAILED)
    major = int(match.group(1))
    if major < 43:
        raise CommandError(
            f"GNOME Shell {major} is older than 43, the oldest this extension supports", exits.REFUSED
        )
    return "esm" if major >= 45 else ""


def _shell_version() -> str:
    if shutil.which("gnome-shell") is None:
        raise CommandError(
            "gnome-shell is not installed: the extension is for GNOME Shell", exits.UNREACHABLE
        )
    done = subprocess.run(
        ["gnome-shell", "--version"], capture_output=True, text=True, timeout=30, check=False
    )
    return done.stdout


def _copy_tree(source: Any, target: Path) -> None:
    """The shipped files (an importlib Traversable) to `target`: directories 0755, files 0644."""
    target.mkdir(parents=True, exist_ok=True)
    target.chmod(0o755)
    for item in source.iterdir():
        if item.is_dir():
            _copy_tree(item, target / item.name)
        else:
            path = target / item.name
            path.write_bytes(item.read_bytes())
            path.chmod(0o644)


# ---- GSettings (the enabled list GNOME reads at login) ------------------------------------------------


def _gsettings(*args: str) -> str:
    if shutil.which("gsettings") is None:
        raise CommandError("gsettings is not installed: this is not a GNOME session", exits.UNREACHABLE)
    done = subprocess.run(["gsettings", *args], capture_output=True, text=True, timeout=10, check=False)
    if done.returncode != 0:
        reason = done.stderr.strip() or f"exit {done.returncode}"
        raise CommandError(f"gsettings {' '.join(args[:3])} failed: {reason}", exits.UNREACHABLE)
    return done.stdout.strip()


def _listed(key: str = _KEY) -> list[str]:
    text = _gsettings("get", _SCHEMA, key).removeprefix("@as ")
    value = ast.literal_eval(text)  # GVariant's text of a string array is a Python list literal
    return [str(item) for item in value]


def _set_listed(key: str, listed: bool) -> None:
    current = _listed(key)
    wanted = [item for item in current if item != UUID] + ([UUID] if listed else [])
    if wanted != current:
        _gsettings("set", _SCHEMA, key, repr(wanted))


def _set_enabled(enabled: bool) -> None:
    _set_listed(_KEY, enabled)
    if enabled:
        _set_listed(_DISABLED_KEY, False)


def _user_extensions_off() -> bool:
    return _gsettings("get", _SCHEMA, "disable-user-extensions") == "true"


# ---- the running shell, on the session bus ------------------------------------------------------------


def _ask_shell(member: str) -> bool | None:
    """org.gnome.Shell.Extensions.<member>(UUID) in the running shell: its answer; None when no shell
    answers on the session bus."""
    from kronii.desktop.session import session_bus_address

    address = session_bus_address(os.environ)
    if not address:
        return None
    try:
        return asyncio.run(_shell_call(address, member))
    except (OSError, EOFError, TimeoutError, ValueError):
        return None  # no bus there, or it broke: no shell to ask


async def _shell_call(address: str, member: str) -> bool | None:
    from dbus_fast import DBusFastError, Message, MessageType
    from dbus_fast.aio import MessageBus

    bus = MessageBus(bus_address=address)
    try:
        await asyncio.wait_for(bus.connect(), 3.0)
        call = Message(
            destination="org.gnome.Shell",
            path="/org/gnome/Shell",
            interface="org.gnome.Shell.Extensions",
            member=member,
            signature="s",
            body=[UUID],
        )
        reply = await asyncio.wait_for(bus.call(call), 5.0)
    except DBusFastError:
        return None
    finally:
        bus.disconnect()
    if reply is None or reply.message_type != MessageType.METHOD_RETURN:
        return None
    return bool(reply.body[0])


def _running() -> bool:
    from kronii.desktop.session import GNOME_EXTENSION_BUS, bus_name_owned, session_bus_address

    return bus_name_owned(GNOME_EXTENSION_BUS, session_bus_address(os.environ))


# ---- the commands -------------------------------------------------------------------------------------


@click.group("gnome-extension")
def gnome_extension_command() -> None:
    """kronii's GNOME Shell extension: it tells the sensor which window is focused on GNOME."""


@gnome_extension_command.command("install")
def install() -> None:
    """Copy the extension into your extensions and enable it."""
    form = form_for(_shell_version())
    shipped = importlib.resources.files("kronii.desktop") / "gnome_extension"
    source = (shipped / form / UUID) if form else (shipped / UUID)
    target = extension_dir()
    if target.exists():
        shutil.rmtree(target)  # an older form or version: only the shipped files stay
    _copy_tree(source, target)
    click.echo(f"installed {UUID} in {target}")
    if _ask_shell("EnableExtension"):
        click.echo("enabled in the running GNOME Shell")
        if _running():
            return
    _set_enabled(True)
    click.echo(f"enabled in GSettings ({_SCHEMA} {_KEY})")
    if _user_extensions_off():
        click.echo(_ALL_OFF)
    click.echo(_LOGIN)


@gnome_extension_command.command("status")
def status() -> None:
    """Whether the extension is installed, enabled, and running (owning org.kronii.Shell1)."""
    installed = (extension_dir() / "metadata.json").is_file()
    running = _running()
    click.echo(f"installed: {'yes' if installed else 'no'} ({extension_dir()})")
    click.echo(f"enabled: {_enabled_text()}")
    click.echo(f"running: {'yes' if running else 'no'} (org.kronii.Shell1 on the session bus)")
    if not installed:
        raise CommandError("not installed: run `kronii gnome-extension install`", exits.NOT_FOUND)
    if not running:
        raise CommandError(f"installed but not running. {_LOGIN}", exits.FAILED)


def _enabled_text() -> str:
    try:
        enabled = UUID in _listed() and UUID not in _listed(_DISABLED_KEY)
        off = _user_extensions_off()
    except CommandError as error:
        return f"unknown ({error.message})"
    return ("yes" if enabled else "no") + (f" ({_ALL_OFF})" if off else "")


@gnome_extension_command.command("uninstall")
def uninstall() -> None:
    """Disable the extension and remove it."""
    target = extension_dir()
    if not target.exists():
        raise CommandError(f"{UUID} is not installed in {target.parent}", exits.NOT_FOUND)
    _ask_shell("DisableExtension")
    _set_enabled(False)
    shutil.rmtree(target)
    click.echo(f"disabled and removed {UUID}; GNOME Shell forgets it at the next login")
