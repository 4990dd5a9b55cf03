"""A real KWin for the tests: Debian's kwin_wayland (KDE Plasma 5.27's compositor), headless
(`--virtual`), with a private session bus, a HOME and runtime directory of its own, and real Wayland
clients of three toolkits on its socket.

Debian ships kwin_wayland with the file capability cap_sys_resource, which some sandboxes (this
project's CI among them) refuse to exec ("Operation not permitted"); a copy, which carries no file
capability, runs the same program. It must keep its name: KWin's Qt platform plugin checks it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.desktop import stop_process
from tests.gnome import private_bus
from tests.wayland import WaylandClient, require_tools

__all__ = ["KWin", "start_kwin"]

_SOCKET = "kronii-kwin"
_START_TIMEOUT_S = 40.0


@dataclass
class KWin:
    home: Path
    session_bus: str
    process: subprocess.Popen[bytes] | None = None
    clients: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def runtime_dir(self) -> Path:
        return self.home / "run"

    @property
    def socket(self) -> Path:
        return self.runtime_dir / _SOCKET

    def env(self, extra: Sequence[tuple[str, str]] = ()) -> dict[str, str]:
        drop = ("DISPLAY", "WAYLAND_DISPLAY", "SWAYSOCK", "XDG_CONFIG_HOME", "XDG_DATA_HOME")
        env = {k: v for k, v in os.environ.items() if k not in drop}
        env.update(
            HOME=str(self.home),
            XDG_RUNTIME_DIR=str(self.runtime_dir),
            WAYLAND_DISPLAY=_SOCKET,
            DBUS_SESSION_BUS_ADDRESS=self.session_bus,
            XDG_CURRENT_DESKTOP="KDE",
            XDG_SESSION_TYPE="wayland",
        )
        env.update(extra)
        return env

    def log(self) -> str:
        path = self.home / "kwin.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def open(self, client: WaylandClient) -> subprocess.Popen[bytes]:
        silent = subprocess.DEVNULL
        process = subprocess.Popen(
            list(client.argv), env=self.env(client.env), stdout=silent, stderr=silent, start_new_session=True
        )
        self.clients.append(process)
        return process

    def kwin_answers(self) -> bool:
        done = subprocess.run(
            ["gdbus", "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path",
             "/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.NameHasOwner", "org.kde.KWin"],
            env=self.env(), capture_output=True, text=True, timeout=10,
        )  # fmt: skip
        return done.stdout.strip() == "(true,)"


@contextmanager
def start_kwin() -> Iterator[KWin]:
    """A headless KWin on a fresh home and session bus; returns once its socket and its bus name
    (org.kde.KWin) answer. Everything is stopped and removed at the end."""
    require_tools("kwin_wayland", "dbus-daemon", "gdbus")
    home = Path(tempfile.mkdtemp(prefix="kronii-kwin-"))
    home.chmod(0o700)
    (home / "run").mkdir(mode=0o700)
    program = home / "bin" / "kwin_wayland"
    program.parent.mkdir()
    shutil.copy(shutil.which("kwin_wayland") or "kwin_wayland", program)
    with ExitStack() as stack:
        session = KWin(home, stack.enter_context(private_bus(home)))
        try:
            log = (home / "kwin.log").open("wb")
            argv = [
                str(program),
                "--virtual",
                "--socket",
                _SOCKET,
                "--no-lockscreen",
                "--width",
                "1280",
                "--height",
                "800",
            ]
            session.process = subprocess.Popen(
                argv, env=session.env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
            log.close()
            _wait_started(session)
            yield session
        finally:
            for client in session.clients:
                stop_process(client)
            if session.process is not None:
                stop_process(session.process, timeout_s=5.0)
            shutil.rmtree(home, ignore_errors=True)


def _wait_started(session: KWin) -> None:
    deadline = time.monotonic() + _START_TIMEOUT_S
    while time.monotonic() < deadline:
        assert session.process is not None
        if session.process.poll() is not None:
            raise RuntimeError(f"kwin_wayland exited {session.process.returncode}: {session.log()}")
        if session.socket.exists() and session.kwin_answers():
            return
        time.sleep(0.2)
    raise TimeoutError(f"kwin_wayland did not start within {_START_TIMEOUT_S} s: {session.log()}")
