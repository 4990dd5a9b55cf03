"""Helpers that run a real, private desktop for tests: Xvfb + openbox, X clients, xdotool input,
and a private D-Bus session bus. Plain functions and context managers; conftest files wire them
into fixtures.

Every process started here is killed on exit, and every wait has a deadline, so a broken tool
fails the test instead of hanging it.
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from Xlib import X, Xatom
from Xlib import display as xdisplay

__all__ = [
    "DesktopError",
    "WindowHandle",
    "active_window",
    "emit_screensaver_active",
    "emit_signal",
    "focus_window",
    "open_window",
    "send_input",
    "set_window_title",
    "start_session_bus",
    "start_xvfb",
    "stop_process",
    "wait_until",
]

STARTUP_TIMEOUT_S = 5.0
COMMAND_TIMEOUT_S = 5.0


class DesktopError(RuntimeError):
    """A desktop helper process did not start or did not do its job in time."""


def _env(display: str | None = None, bus_address: str | None = None) -> dict[str, str]:
    env = dict(os.environ)
    if display is not None:
        env["DISPLAY"] = display
    if bus_address is not None:
        env["DBUS_SESSION_BUS_ADDRESS"] = bus_address
    return env


def stop_process(proc: subprocess.Popen[Any], timeout_s: float = 2.0) -> None:
    """SIGTERM, wait, then SIGKILL: how every helper process of the tests is stopped."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=timeout_s)


def _read_line(fd: int, timeout_s: float, what: str) -> str:
    """One line from a pipe, bounded in time: the daemons here print their address then keep running."""
    deadline = time.monotonic() + timeout_s
    data = b""
    while b"\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0:
            raise DesktopError(f"{what} printed nothing within {timeout_s}s (got {data!r})")
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 4096)
        if not chunk:
            raise DesktopError(f"{what} exited before printing a line (got {data!r})")
        data += chunk
    return data.split(b"\n", 1)[0].decode().strip()


def _run(args: Sequence[str], display: str | None = None, bus_address: str | None = None) -> str:
    try:
        done = subprocess.run(
            list(args),
            env=_env(display, bus_address),
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise DesktopError(f"{' '.join(args)} took longer than {COMMAND_TIMEOUT_S}s") from exc
    if done.returncode != 0:
        raise DesktopError(f"{' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def wait_until(
    predicate: Callable[[], object],
    timeout_s: float = STARTUP_TIMEOUT_S,
    interval_s: float = 0.02,
    what: str = "condition",
) -> None:
    """Poll `predicate()` until it is truthy; raise DesktopError after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise DesktopError(f"{what} not reached within {timeout_s}s")
        time.sleep(interval_s)


# ---- X server -----------------------------------------------------------------------------------


def _wm_running(dpy: Any) -> bool:
    root = dpy.screen().root
    atom = dpy.intern_atom("_NET_SUPPORTING_WM_CHECK")
    return root.get_full_property(atom, X.AnyPropertyType) is not None


def _window_list(dpy: Any, name: str) -> list[int]:
    prop = dpy.screen().root.get_full_property(dpy.intern_atom(name), X.AnyPropertyType)
    return [] if prop is None else [int(v) for v in prop.value]


def _managed_after_map(dpy: Any, window: Any, wm_state: int) -> bool:
    window.map()
    dpy.sync()
    return window.get_full_property(wm_state, X.AnyPropertyType) is not None


def _wait_for_wm(display: str) -> None:
    """Wait until the window manager is up and managing windows.

    openbox publishes _NET_SUPPORTING_WM_CHECK before its event loop runs, and map requests made
    in between are lost: such a window stays unmapped and an xterm stalls 5 s in Xt's wmTimeout.
    So a probe window is mapped, again and again, until openbox manages it (sets WM_STATE).
    """
    dpy = xdisplay.Display(display)
    try:
        wait_until(lambda: _wm_running(dpy), what=f"a window manager on {display}")
        root = dpy.screen().root
        wm_state = dpy.intern_atom("WM_STATE")
        probe = root.create_window(0, 0, 8, 8, 0, X.CopyFromParent)
        wait_until(
            lambda: _managed_after_map(dpy, probe, wm_state),
            interval_s=0.05,
            what=f"the window manager on {display} managing a window",
        )
        probe.destroy()
        dpy.sync()
        wait_until(
            lambda: probe.id not in _window_list(dpy, "_NET_CLIENT_LIST"),
            what=f"the window manager on {display} forgetting the probe window",
        )
        # openbox leaves _NET_ACTIVE_WINDOW naming the destroyed probe; tests expect a desktop with
        # no active window, which EWMH spells None.
        root.change_property(dpy.intern_atom("_NET_ACTIVE_WINDOW"), Xatom.WINDOW, 32, [X.NONE])
        dpy.sync()
    finally:
        dpy.close()


@contextlib.contextmanager
def start_xvfb(extra_args: Sequence[str] = (), screen: str = "1024x768x24") -> Iterator[str]:
    """Run Xvfb on a free display with openbox managing it; yield the DISPLAY string (":N").

    openbox is there because _NET_ACTIVE_WINDOW, which the sensor reads, is a window manager's job.
    `extra_args` go to Xvfb (e.g. ["-extension", "MIT-SCREEN-SAVER"] to take an extension away).
    """
    read_fd, write_fd = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", screen, "-nolisten", "tcp", *extra_args],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    os.close(write_fd)
    wm: subprocess.Popen[bytes] | None = None
    try:
        try:
            number = _read_line(read_fd, STARTUP_TIMEOUT_S, "Xvfb -displayfd")
        finally:
            os.close(read_fd)
        display = f":{number}"
        wm = subprocess.Popen(
            ["openbox", "--sm-disable"],
            env=_env(display),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        _wait_for_wm(display)
        yield display
    finally:
        if wm is not None:
            stop_process(wm)
        stop_process(xvfb)


# ---- X clients and input ------------------------------------------------------------------------


@dataclass
class WindowHandle:
    """A real X client window (an xterm) started by open_window()."""

    display: str
    window_id: int
    pid: int
    wm_class: str
    instance: str
    title: str
    process: subprocess.Popen[bytes] = field(repr=False)
    started_after: float = 0.0
    started_before: float = 0.0

    def close(self) -> None:
        stop_process(self.process)

    def __enter__(self) -> WindowHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_window(display: str, title: str, wm_class: str, instance: str | None = None) -> WindowHandle:
    """Start an xterm titled `title` with WM_CLASS (instance, `wm_class`) and wait until it is mapped.

    `wm_class` must be unique on the display: the window is found by it. The xterm runs `sleep`
    rather than a shell, so no shell prompt rewrites its title. `started_after`/`started_before`
    bracket the process start in epoch seconds.
    """
    instance = instance if instance is not None else wm_class.lower()
    started_after = time.time()
    proc = subprocess.Popen(
        ["xterm", "-class", wm_class, "-name", instance, "-T", title, "-e", "sleep", "600"],
        env=_env(display),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    started_before = time.time()
    try:
        out = _run(["xdotool", "search", "--sync", "--onlyvisible", "--class", f"^{wm_class}$"], display)
        window_id = int(out.split()[0])
    except BaseException:
        stop_process(proc)
        raise
    return WindowHandle(
        display=display,
        window_id=window_id,
        pid=proc.pid,
        wm_class=wm_class,
        instance=instance,
        title=title,
        process=proc,
        started_after=started_after,
        started_before=started_before,
    )


def active_window(display: str) -> int:
    """The window id in the root's _NET_ACTIVE_WINDOW, as xdotool sees it."""
    return int(_run(["xdotool", "getactivewindow"], display).strip())


def focus_window(display: str, window_id: int) -> None:
    """Activate a window through the window manager and wait until it is active."""
    _run(["xdotool", "windowactivate", "--sync", str(window_id)], display)


def set_window_title(display: str, window_id: int, title: str) -> None:
    """Rewrite WM_NAME and _NET_WM_NAME, as an application changing its title would."""
    _run(["xdotool", "set_window", "--name", title, str(window_id)], display)


def send_input(display: str) -> None:
    """Fake user input through XTEST (a 1 px pointer motion and a Shift press), which resets idle."""
    _run(["xdotool", "mousemove_relative", "--", "1", "1"], display)
    _run(["xdotool", "key", "shift"], display)


# ---- D-Bus --------------------------------------------------------------------------------------


@contextlib.contextmanager
def start_session_bus() -> Iterator[str]:
    """Run a private dbus-daemon with the session configuration; yield its address."""
    proc = subprocess.Popen(
        ["dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        address = _read_line(proc.stdout.fileno(), STARTUP_TIMEOUT_S, "dbus-daemon --print-address")
        if not address:
            raise DesktopError("dbus-daemon printed an empty address")
        yield address
    finally:
        stop_process(proc)
        if proc.stdout is not None:
            proc.stdout.close()


def emit_screensaver_active(
    bus_address: str,
    active: bool,
    *,
    interface: str = "org.freedesktop.ScreenSaver",
    path: str = "/org/freedesktop/ScreenSaver",
) -> None:
    """Broadcast `<interface>.ActiveChanged(active)` on the bus, as a screen locker does."""
    _run(
        [
            "dbus-send",
            f"--bus={bus_address}",
            "--type=signal",
            path,
            f"{interface}.ActiveChanged",
            f"boolean:{'true' if active else 'false'}",
        ]
    )


def emit_signal(bus_address: str, path: str, interface: str, member: str, *args: str) -> None:
    """Broadcast an arbitrary signal with dbus-send (args in dbus-send syntax, e.g. "boolean:true")."""
    _run(["dbus-send", f"--bus={bus_address}", "--type=signal", path, f"{interface}.{member}", *args])
