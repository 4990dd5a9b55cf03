"""A real Wayland session for the tests: sway from Debian, headless (no GPU, no input devices, the pixman
renderer), with real Wayland clients in it (foot; GTK3 and GTK4 with GDK_BACKEND=wayland; Qt with
QT_QPA_PLATFORM=wayland).

sway refuses to run as root, and CI runs as root: there it runs as `nobody` in a runtime directory of its
own, and the tests (root) reach its socket by path. Run as another user, it runs as that user.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.desktop import stop_process

__all__ = [
    "CLIENTS",
    "Cage",
    "Sway",
    "WaylandClient",
    "Weston",
    "require_tools",
    "start_cage",
    "start_sway",
    "start_weston",
]

_NOBODY = 65534
_START_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class WaylandClient:
    """A program to open as a Wayland window: its command line, the app id it reports, its environment."""

    kind: str
    argv: tuple[str, ...]
    app_id: str
    env: tuple[tuple[str, str], ...] = ()


CLIENTS = (
    WaylandClient("foot", ("foot", "--title", "foot terminal"), "foot"),
    WaylandClient("gtk3", ("galculator",), "galculator", (("GDK_BACKEND", "wayland"),)),
    WaylandClient("gtk4", ("gnome-calculator",), "org.gnome.Calculator", (("GDK_BACKEND", "wayland"),)),
    WaylandClient("qt5", ("featherpad",), "featherpad", (("QT_QPA_PLATFORM", "wayland"),)),
)


def require_tools(*tools: str) -> None:
    """Fail (never skip) with the install hint when a program the test runs is missing: each is a
    system package scripts/install_system_deps.sh installs, and CI always has it."""
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        raise RuntimeError(f"missing {missing}: run scripts/install_system_deps.sh as root")


@dataclass
class Sway:
    """A running headless sway: its socket, its IPC socket, and the environment for its clients."""

    runtime_dir: Path
    socket: Path
    ipc: Path
    clients: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def env(self, extra: Sequence[tuple[str, str]] = ()) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "SWAYSOCK")}
        env.update(WAYLAND_DISPLAY=str(self.socket), XDG_RUNTIME_DIR=str(self.runtime_dir))
        env["SWAYSOCK"] = str(self.ipc)
        env.update(extra)
        return env

    def msg(self, *command: str) -> Any:
        done = subprocess.run(
            ["swaymsg", "-s", str(self.ipc), "-r", *command], capture_output=True, text=True, timeout=10
        )
        if done.returncode != 0:
            raise RuntimeError(f"swaymsg {' '.join(command)}: {done.stdout} {done.stderr}")
        return json.loads(done.stdout) if done.stdout.strip() else None

    def windows(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []

        def walk(node: dict[str, Any]) -> None:
            if node.get("app_id") is not None and node.get("pid"):
                found.append(node)
            for child in node.get("nodes", []) + node.get("floating_nodes", []):
                walk(child)

        walk(self.msg("-t", "get_tree"))
        return found

    def open(self, client: WaylandClient, timeout_s: float = 20.0) -> dict[str, Any]:
        """Start a client and wait for its window; the window as sway describes it."""
        require_tools(client.argv[0])
        dbus = ("dbus-run-session", "--") if shutil.which("dbus-run-session") else ()
        process = subprocess.Popen(
            [*dbus, *client.argv],
            env=self.env(client.env),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.clients.append(process)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for window in self.windows():
                if window["app_id"] == client.app_id:
                    return window
            if process.poll() is not None:
                raise RuntimeError(f"{client.kind} ({client.argv[0]}) exited {process.returncode}")
            time.sleep(0.1)
        raise TimeoutError(f"no {client.app_id} window within {timeout_s} s")

    def focus(self, app_id: str) -> None:
        self.msg(f'[app_id="^{app_id}$"] focus')


def stop_group(process: subprocess.Popen[bytes], timeout_s: float = 2.0) -> None:
    """Stop a client started in a session of its own, with all it started there: its private session bus
    and what that bus activated (GTK's accessibility bus), which would outlive the client otherwise."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=timeout_s)


def _as_nobody(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv
    return ["setpriv", f"--reuid={_NOBODY}", f"--regid={_NOBODY}", "--clear-groups", *argv]


@contextmanager
def start_sway(size: str = "1280x800") -> Iterator[Sway]:
    """A headless sway with one output of `size`, no borders, no bar; stopped with its clients."""
    require_tools("sway", "swaymsg", "foot")
    runtime = Path(tempfile.mkdtemp(prefix="kronii-sway-"))
    runtime.chmod(0o700)
    if os.geteuid() == 0:
        os.chown(runtime, _NOBODY, _NOBODY)
    config = runtime / "config"
    config.write_text(f"output HEADLESS-1 resolution {size}\ndefault_border none\nfocus_follows_mouse no\n")
    config.chmod(0o644)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(runtime),
        "XDG_RUNTIME_DIR": str(runtime),
        "WLR_BACKENDS": "headless",
        "WLR_LIBINPUT_NO_DEVICES": "1",
        "WLR_RENDERER": "pixman",
        "WLR_XWAYLAND": "",
    }
    log = (runtime / "sway.log").open("wb")
    sway = subprocess.Popen(
        _as_nobody(["sway", "--config", str(config)]),
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    session: Sway | None = None
    try:
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            sockets = [p for p in runtime.glob("wayland-*") if not p.name.endswith(".lock")]
            ipcs = list(runtime.glob("sway-ipc.*.sock"))
            if sockets and ipcs:
                session = Sway(runtime, sockets[0], ipcs[0])
                break
            if sway.poll() is not None:
                raise RuntimeError(
                    f"sway exited {sway.returncode}: {(runtime / 'sway.log').read_text()[-2000:]}"
                )
            time.sleep(0.05)
        if session is None:
            raise TimeoutError("sway did not open its sockets")
        session.msg("-t", "get_version")
        yield session
    finally:
        if session is not None:
            for client in session.clients:
                stop_group(client)
        stop_process(sway)
        log.close()
        shutil.rmtree(runtime, ignore_errors=True)


# ---- weston (a Wayland session that offers no wlroots protocol) -------------------------------------


@dataclass
class Weston:
    """A running headless weston: its runtime directory and socket, and the environment for its clients."""

    runtime_dir: Path
    socket: Path

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "SWAYSOCK")}
        env.update(WAYLAND_DISPLAY=str(self.socket), XDG_RUNTIME_DIR=str(self.runtime_dir))
        return env


@contextmanager
def start_weston() -> Iterator[Weston]:
    """A headless weston (it runs as root) on a socket of its own in a private runtime directory; stopped
    at the end."""
    require_tools("weston")
    runtime = Path(tempfile.mkdtemp(prefix="kronii-weston-"))
    runtime.chmod(0o700)
    name = "kronii-weston"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(runtime),
        "XDG_RUNTIME_DIR": str(runtime),
    }
    log = (runtime / "weston.log").open("wb")
    weston = subprocess.Popen(
        ["weston", "--backend=headless-backend.so", f"--socket={name}", "--idle-time=0"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        socket = runtime / name
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not socket.exists():
            if weston.poll() is not None:
                raise RuntimeError(
                    f"weston exited {weston.returncode}: {(runtime / 'weston.log').read_text()[-2000:]}"
                )
            if time.monotonic() > deadline:
                raise TimeoutError("weston did not open its socket")
            time.sleep(0.05)
        yield Weston(runtime, socket)
    finally:
        stop_process(weston)
        log.close()
        shutil.rmtree(runtime, ignore_errors=True)


# ---- cage (another wlroots compositor: screen copy and idle, no window list) ------------------------


@dataclass
class Cage:
    """A running headless cage (a wlroots kiosk showing one client full screen): its socket and the
    environment for programs that reach it."""

    runtime_dir: Path
    socket: Path

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "SWAYSOCK")}
        env.update(WAYLAND_DISPLAY=str(self.socket), XDG_RUNTIME_DIR=str(self.runtime_dir))
        return env


@contextmanager
def start_cage(client: WaylandClient) -> Iterator[Cage]:
    """A headless cage (as `nobody` under root, as sway) showing `client`; stopped with it. cage exits
    when its client does, so the client must keep running."""
    require_tools("cage", client.argv[0])
    runtime = Path(tempfile.mkdtemp(prefix="kronii-cage-"))
    runtime.chmod(0o700)
    if os.geteuid() == 0:
        os.chown(runtime, _NOBODY, _NOBODY)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(runtime),
        "XDG_RUNTIME_DIR": str(runtime),
        "WLR_BACKENDS": "headless",
        "WLR_LIBINPUT_NO_DEVICES": "1",
        "WLR_RENDERER": "pixman",
        **dict(client.env),
    }
    log = (runtime / "cage.log").open("wb")
    cage = subprocess.Popen(
        _as_nobody(["cage", "--", *client.argv]),
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not (sockets := [p for p in runtime.glob("wayland-*") if not p.name.endswith(".lock")]):
            if cage.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"cage did not start: {(runtime / 'cage.log').read_text()[-2000:]}")
            time.sleep(0.05)
        yield Cage(runtime, sockets[0])
    finally:
        stop_group(cage)
        log.close()
        shutil.rmtree(runtime, ignore_errors=True)


# ---- windows with known contents, and the real screenshot tool ---------------------------------------


def foot_showing(text_file: Path, app_id: str) -> WaylandClient:
    """foot printing a text file (DejaVu Sans Mono 12, black on white, no cursor), then waiting."""
    show = f"cat '{text_file}'; printf '\\033[?25l'; sleep 600"
    argv = (
        "foot", "--app-id", app_id, "--title", app_id, "--font", "DejaVu Sans Mono:size=12",
        "-o", "colors.background=ffffff", "-o", "colors.foreground=000000", "sh", "-c", show,
    )  # fmt: skip
    return WaylandClient("foot", argv, app_id)


def grim_region(session: Sway | Cage, rect: dict[str, int]) -> bytes:
    """`grim -g "x,y wxh" -` of a rectangle of the layout: the PNG the real tool writes."""
    region = f"{rect['x']},{rect['y']} {rect['width']}x{rect['height']}"
    return subprocess.run(
        ["grim", "-g", region, "-"], env=session.env(), capture_output=True, check=True, timeout=10
    ).stdout


def wait_until_still(session: Sway | Cage, rect: dict[str, int], timeout_s: float = 10.0) -> None:
    """Until the rectangle shows more than one colour and two copies 0.3 s apart are equal: the window
    has drawn its contents and stopped."""
    import numpy as np
    from kronii.desktop.wayland_screencopy import ScreenCopy

    deadline = time.monotonic() + timeout_s
    previous = b""
    with ScreenCopy(session.socket) as screen:
        while time.monotonic() < deadline:
            pixels = screen.region(rect["x"], rect["y"], rect["width"], rect["height"])
            current = pixels.tobytes()
            if current == previous and len(np.unique(pixels.reshape(-1, 3), axis=0)) > 1:
                return
            previous = current
            time.sleep(0.3)
    raise TimeoutError(f"the window at {rect} did not settle within {timeout_s} s")
