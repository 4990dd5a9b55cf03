"""A real GNOME session for the tests: gnome-shell from Debian, headless (`--headless --wayland
--virtual-monitor`), as the user running the tests (root in CI: gnome-shell allows it), with private
session and system buses (two dbus-daemons; the system one stands in for polkit's, logind's and
geoclue's bus, which the shell asks and does without), a HOME and runtime directory of its own, and
real GTK clients on its Wayland socket.

`home` is made before the shell starts, so a test can install the extension there first (as a person
does before they log in).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.desktop import stop_process
from tests.wayland import require_tools

__all__ = ["GnomeSession", "gnome_home", "start_gnome_for_capture", "start_gnome_shell"]

_SOCKET = "kronii-gnome"
_START_TIMEOUT_S = 40.0


@dataclass
class GnomeSession:
    """The home, buses and (once started) the Wayland socket of a headless GNOME."""

    home: Path
    session_bus: str
    system_bus: str
    clients: list[subprocess.Popen[bytes]] = field(default_factory=list)
    shell: subprocess.Popen[bytes] | None = None

    @property
    def runtime_dir(self) -> Path:
        return self.home / "run"

    @property
    def socket(self) -> Path:
        return self.runtime_dir / _SOCKET

    def env(self, extra: Sequence[tuple[str, str]] = ()) -> dict[str, str]:
        """The environment of a program of this session (the CLI, a client, the sensor's probe)."""
        drop = ("DISPLAY", "WAYLAND_DISPLAY", "SWAYSOCK", "XDG_CONFIG_HOME", "XDG_DATA_HOME")
        env = {k: v for k, v in os.environ.items() if k not in drop}
        env.update(
            HOME=str(self.home),
            XDG_RUNTIME_DIR=str(self.runtime_dir),
            WAYLAND_DISPLAY=_SOCKET,
            DBUS_SESSION_BUS_ADDRESS=self.session_bus,
            DBUS_SYSTEM_BUS_ADDRESS=self.system_bus,
            XDG_CURRENT_DESKTOP="GNOME",
        )
        env.update(extra)
        return env

    def log(self) -> str:
        path = self.home / "gnome-shell.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def gdbus_call(self, dest: str, path: str, method: str, *args: str) -> str:
        done = subprocess.run(
            ["gdbus", "call", "--session", "--dest", dest, "--object-path", path, "--method", method, *args],
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=10,
        )
        if done.returncode != 0:
            raise RuntimeError(f"gdbus call {method}: {done.stderr.strip()}")
        return done.stdout.strip()

    def name_has_owner(self, name: str) -> bool:
        out = self.gdbus_call(
            "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", name
        )
        return out == "(true,)"

    def hide_overview(self) -> None:
        """GNOME opens on the overview, which holds the keyboard: no window has the focus until it is
        hidden (org.gnome.Shell's OverviewActive, writable over D-Bus without unsafe mode)."""
        self.gdbus_call(
            "org.gnome.Shell", "/org/gnome/Shell", "org.freedesktop.DBus.Properties.Set",
            "org.gnome.Shell", "OverviewActive", "<false>",
        )  # fmt: skip

    def start(self) -> None:
        """gnome-shell on this home and these buses; returns when its Wayland socket and its D-Bus
        name (org.gnome.Shell) answer."""
        log = (self.home / "gnome-shell.log").open("wb")
        argv = ["gnome-shell", "--headless", "--wayland", "--wayland-display", _SOCKET]
        self.shell = subprocess.Popen(
            [*argv, "--virtual-monitor", "1280x800"],
            env=self.env((("XDG_SESSION_TYPE", "wayland"),)),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.shell.poll() is not None:
                raise RuntimeError(f"gnome-shell exited {self.shell.returncode}: {self.log()}")
            started = "GNOME Shell started" in self.log()
            if started and self.socket.exists() and self.name_has_owner("org.gnome.Shell"):
                return
            time.sleep(0.2)
        raise TimeoutError(f"gnome-shell did not start within {_START_TIMEOUT_S} s: {self.log()}")

    def start_pipewire(self) -> None:
        """PipeWire and its session manager (wireplumber) in this session, as a GNOME login starts them:
        mutter's screen cast sends its frames through them. Returns once PipeWire's socket is there."""
        require_tools("pipewire", "wireplumber", "gst-launch-1.0")
        for program in ("pipewire", "wireplumber"):
            silent = subprocess.DEVNULL
            process = subprocess.Popen(
                [program], env=self.env(), stdout=silent, stderr=silent, start_new_session=True
            )
            self.clients.append(process)
            deadline = time.monotonic() + 10
            while program == "pipewire" and not (self.runtime_dir / "pipewire-0").exists():
                if time.monotonic() > deadline:
                    raise TimeoutError("pipewire made no socket within 10 s")
                time.sleep(0.05)

    def focus_fields(self) -> str:
        """kronii's extension's GetFocus, as gdbus prints it."""
        return self.gdbus_call("org.kronii.Shell1", "/org/kronii/Shell1", "org.kronii.Shell1.GetFocus")

    def open(self, argv: Sequence[str]) -> subprocess.Popen[bytes]:
        """A GTK client on this session's Wayland socket (its own windows; the caller waits for them)."""
        process = subprocess.Popen(
            list(argv),
            env=self.env((("GDK_BACKEND", "wayland"),)),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.clients.append(process)
        return process


@contextmanager
def private_bus(home: Path) -> Iterator[str]:
    """A private dbus-daemon (session configuration: everything allowed) whose activated services
    (dconf-service, ...) see this home, not the tests' own."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)}
    env["XDG_RUNTIME_DIR"] = str(home / "run")
    process = subprocess.Popen(
        ["dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        address = process.stdout.readline().decode().strip()
        if not address:
            raise RuntimeError("dbus-daemon printed no address")
        yield address
    finally:
        stop_process(process)
        if process.stdout is not None:
            process.stdout.close()


@contextmanager
def gnome_home() -> Iterator[GnomeSession]:
    """A fresh home and the two buses, the shell not started (`GnomeSession.start`); everything stopped
    and removed at the end."""
    require_tools("gnome-shell", "dbus-daemon", "gnome-calculator", "galculator")
    home = Path(tempfile.mkdtemp(prefix="kronii-gnome-"))
    home.chmod(0o700)
    (home / "run").mkdir(mode=0o700)
    with ExitStack() as stack:
        session_bus = stack.enter_context(private_bus(home))
        system_bus = stack.enter_context(private_bus(home))
        session = GnomeSession(home, session_bus, system_bus)
        try:
            yield session
        finally:
            for client in session.clients:
                stop_process(client)
            if session.shell is not None:
                stop_process(session.shell, timeout_s=5.0)
            shutil.rmtree(home, ignore_errors=True)


@contextmanager
def start_gnome_shell() -> Iterator[GnomeSession]:
    """A started headless GNOME on a fresh home (no extension installed)."""
    with gnome_home() as session:
        session.start()
        yield session


@contextmanager
def start_gnome_for_capture() -> Iterator[GnomeSession]:
    """A started headless GNOME as a person's session is for capture: kronii's Shell extension
    installed (`kronii gnome-extension install`, before the shell starts), PipeWire and wireplumber
    running, the caret not blinking (the tests compare frames pixel for pixel), the overview hidden."""
    kronii = str(Path(sys.executable).with_name("kronii"))
    with gnome_home() as session:
        installed = subprocess.run(
            [kronii, "gnome-extension", "install"],
            env=session.env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        if installed.returncode != 0:
            raise RuntimeError(f"kronii gnome-extension install failed: {installed.stderr}")
        quiet = ["gsettings", "set", "org.gnome.desktop.interface", "cursor-blink", "false"]
        subprocess.run(quiet, env=session.env(), check=True, timeout=20)
        session.start_pipewire()
        session.start()
        deadline = time.monotonic() + 15
        while not session.name_has_owner("org.kronii.Shell1"):
            if time.monotonic() > deadline:
                raise TimeoutError(f"kronii's extension did not take its bus name: {session.log()}")
            time.sleep(0.1)
        session.hide_overview()
        yield session
