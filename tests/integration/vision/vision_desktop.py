"""A private accessible desktop for the vision engine's tests: Xvfb + openbox, a private session bus
whose at-spi-bus-launcher puts its socket in a private XDG_RUNTIME_DIR, and the GTK3 test form.

Everything the session bus activated (at-spi-bus-launcher, its accessibility dbus-daemon,
at-spi2-registryd) runs in the bus's own process session, so it is found by session id and stopped
with the bus: nothing outlives a test. dbus-daemon forks activated services away from itself; this
process adopts them meanwhile (a child subreaper) so that they are reaped here, not left as zombies.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import queue
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from kronii.vision.adapters.atspi import AtspiReader
from kronii.vision.core.context import Bounds, RawNode
from Xlib import display as xdisplay

from tests.desktop import DesktopError, start_session_bus, start_xvfb, stop_process, wait_until

__all__ = [
    "FORM_TITLE",
    "SYSTEM_PYTHON",
    "A11yDesktop",
    "GtkForm",
    "client_rect",
    "form_window_id",
    "start_a11y_desktop",
    "start_gtk_form",
    "wait_for_window",
]

SYSTEM_PYTHON = "/usr/bin/python3"
FORM_SCRIPT = Path(__file__).with_name("gtk_form.py")
FORM_TITLE = "Kronii Test Form"
AT_SPI_BUS_LAUNCHER = "/usr/libexec/at-spi-bus-launcher"
LINE_TIMEOUT_S = 10.0
# Switching accessibility on makes at-spi-bus-launcher write the gsetting toolkit-accessibility; with
# dconf that would land in the tester's own ~/.config/dconf, so the test desktop keeps settings in memory.
ACTIVATION_ENV = {"GSETTINGS_BACKEND": "memory"}
PR_SET_CHILD_SUBREAPER = 36


@dataclass
class A11yDesktop:
    display: str
    bus_address: str
    runtime_dir: str
    # What every application of this desktop runs with besides (GDK_SCALE=2 for a HiDPI desktop).
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def env(self) -> dict[str, str]:
        """The environment an application of this desktop runs with."""
        env = {k: v for k, v in os.environ.items() if k not in ("AT_SPI_BUS_ADDRESS", "NO_AT_BRIDGE")}
        env.update(
            DISPLAY=self.display, DBUS_SESSION_BUS_ADDRESS=self.bus_address, XDG_RUNTIME_DIR=self.runtime_dir
        )
        env.update(self.extra_env)
        env.update(ACTIVATION_ENV)
        return env


def _require_tools() -> None:
    """Fail (never skip) with the install hint when a system tool is missing."""
    missing = [tool for tool in (SYSTEM_PYTHON, AT_SPI_BUS_LAUNCHER) if not os.access(tool, os.X_OK)]
    missing += [
        tool for tool in ("dbus-update-activation-environment", "xdotool") if shutil.which(tool) is None
    ]
    if not missing:
        probe = "import gi; gi.require_version('Gtk', '3.0'); from gi.repository import Gtk"
        if subprocess.run([SYSTEM_PYTHON, "-c", probe], capture_output=True, check=False).returncode != 0:
            missing.append("python3-gi with gir1.2-gtk-3.0")
    if missing:
        raise DesktopError(f"missing {missing}: run scripts/install_system_deps.sh as root")


def _session_members(sid: int, zombies: bool = False) -> list[int]:
    """Processes whose session id is `sid` (the session bus and what it activated)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # Fields after the parenthesised command: state ppid pgrp session ...
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[3]) == sid and (zombies or fields[0] != "Z"):
            members.append(int(entry.name))
    return members


def _stop_activated(sid: int, bus_pid: int) -> None:
    """TERM, then KILL, each process the bus activated, by pid, and wait until all are gone."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in _session_members(sid):
            if pid != bus_pid:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
        with contextlib.suppress(DesktopError):
            wait_until(lambda: not set(_session_members(sid)) - {bus_pid}, timeout_s=2.0, what="a11y exit")
    left = set(_session_members(sid)) - {bus_pid}
    if left:
        raise DesktopError(f"processes activated by the test bus survived SIGKILL: {sorted(left)}")
    for pid in set(_session_members(sid, zombies=True)) - {bus_pid}:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


@contextlib.contextmanager
def _adopting_orphans() -> Iterator[None]:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise DesktopError(f"prctl(PR_SET_CHILD_SUBREAPER) failed: {os.strerror(ctypes.get_errno())}")
    try:
        yield
    finally:
        libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


def _bus_pid(bus_address: str) -> int:
    out = subprocess.run(
        ["dbus-send", f"--bus={bus_address}", "--print-reply", "--dest=org.freedesktop.DBus",
         "/org/freedesktop/DBus", "org.freedesktop.DBus.GetConnectionUnixProcessID", "string:org.freedesktop.DBus"],
        capture_output=True, text=True, timeout=5, check=True,
    ).stdout  # fmt: skip
    return int(out.split()[-1])


@contextlib.contextmanager
def start_a11y_desktop(
    xvfb_args: Sequence[str] = (), extra_env: dict[str, str] | None = None, *, screen: str = "1024x768x24"
) -> Iterator[A11yDesktop]:
    """Xvfb + openbox and a private session bus whose activated services see this DISPLAY and a
    private XDG_RUNTIME_DIR (where at-spi-bus-launcher puts the accessibility bus socket).
    `xvfb_args` go to Xvfb (["-dpi", "192"]); `extra_env` to every application (GDK_SCALE); `screen` is
    Xvfb's size ("1920x1080x24" for the benchmarks)."""
    _require_tools()
    runtime_dir = tempfile.mkdtemp(prefix="kronii-a11y-")
    os.chmod(runtime_dir, 0o700)
    try:
        with (
            _adopting_orphans(),
            start_xvfb(xvfb_args, screen) as display,
            start_session_bus() as bus_address,
        ):
            desktop = A11yDesktop(display, bus_address, runtime_dir, dict(extra_env or {}))
            subprocess.run(
                ["dbus-update-activation-environment", f"DISPLAY={display}", f"XDG_RUNTIME_DIR={runtime_dir}",
                 *(f"{key}={value}" for key, value in ACTIVATION_ENV.items())],
                env=desktop.env, capture_output=True, timeout=5, check=True,
            )  # fmt: skip
            # start_session_bus runs the daemon as a session leader: what it activates shares its session.
            bus_pid = _bus_pid(bus_address)
            sid = os.getsid(bus_pid)
            try:
                yield desktop
            finally:
                _stop_activated(sid, bus_pid)
    finally:
        shutil.rmtree(runtime_dir, ignore_errors=True)


@dataclass
class GtkForm:
    """The running gtk_form.py: its stdout lines arrive in `lines`, commands go to its stdin."""

    process: subprocess.Popen[str]
    lines: queue.Queue[str] = field(default_factory=queue.Queue)
    seen: list[str] = field(default_factory=list)

    def send(self, command: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()

    def expect(self, matches: Callable[[str], bool], timeout_s: float = LINE_TIMEOUT_S) -> str:
        """The next printed line `matches` accepts; DesktopError after `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                line = self.lines.get(timeout=0.05)
            except queue.Empty:
                if self.process.poll() is not None and self.lines.empty():
                    raise DesktopError(
                        f"the form exited ({self.process.returncode}); it printed {self.seen}"
                    ) from None
                if time.monotonic() > deadline:
                    raise DesktopError(
                        f"the form printed no expected line in {timeout_s}s ({self.seen})"
                    ) from None
                continue
            self.seen.append(line)
            if matches(line):
                return line


def _pump(stream: IO[str], lines: queue.Queue[str]) -> None:
    for line in stream:
        lines.put(line.rstrip("\n"))


@contextlib.contextmanager
def start_gtk_form(desktop: A11yDesktop, secret: str, *, hot_zone: bool = False) -> Iterator[GtkForm]:
    """Run the GTK form on `desktop` with the system python; wait for its READY. `hot_zone` adds an
    area named "Hot Zone" that takes clicks but offers no accessibility action."""
    process = subprocess.Popen(
        [SYSTEM_PYTHON, str(FORM_SCRIPT), "--secret", secret, *(["--hot-zone"] if hot_zone else [])],
        env=desktop.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        text=True, start_new_session=True,
    )  # fmt: skip
    form = GtkForm(process)
    assert process.stdout is not None
    pump = threading.Thread(target=_pump, args=(process.stdout, form.lines), daemon=True)
    pump.start()
    try:
        form.expect(lambda line: line == "READY")
        yield form
    finally:
        with contextlib.suppress(OSError):
            form.send("quit")
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=2)
        stop_process(process)
        pump.join(timeout=2)
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


async def wait_for_window(reader: AtspiReader, title: str, timeout_s: float = 10.0) -> tuple[RawNode, ...]:
    """Snapshots until one holds a frame called `title` with its children; that snapshot."""
    deadline = time.monotonic() + timeout_s
    while True:
        nodes = await reader.snapshot()
        frames = [n for n in nodes if n.role == "frame" and n.name == title]
        if frames and any(n.parent == frames[0].ref for n in nodes):
            return nodes
        if time.monotonic() > deadline:
            raise DesktopError(f"no frame {title!r} in the accessibility tree within {timeout_s}s")
        await asyncio.sleep(0.1)


def form_window_id(display: str) -> int:
    out = subprocess.run(
        ["xdotool", "search", "--sync", "--onlyvisible", "--name", f"^{FORM_TITLE}$"],
        env={**os.environ, "DISPLAY": display}, capture_output=True, text=True, timeout=10, check=True,
    ).stdout  # fmt: skip
    return int(out.split()[0])


def client_rect(display: str, window_id: int) -> Bounds:
    """The X window's client area in root coordinates, as the X server has it."""
    dpy = xdisplay.Display(display)
    try:
        window = dpy.create_resource_object("window", window_id)
        geometry = window.get_geometry()
        origin = dpy.screen().root.translate_coords(window, 0, 0)
        return Bounds(origin.x, origin.y, geometry.width, geometry.height)
    finally:
        dpy.close()
