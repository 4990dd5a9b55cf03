"""The person at a real broker's desktop, and two independent witnesses of what reached the screen:

- `Editor`: a GTK3 text editor (gtk_editor.py, run by the system python) on the broker's display,
  whose text is read back over AT-SPI (the vision engine's AtspiReader, on the desktop's own buses);
- `Viewer`: xtightvncviewer, a real VNC viewer from Debian, on an Xvfb of its own, attached to the
  broker's x11vnc with the broker's password file; the person's key is pressed in it (xdotool on the
  viewer's display, the viewer's window focused) and reaches the broker's display through x11vnc;
- `XiLog`: `xinput test-xi2 --root` on the broker's display, which prints every raw event in the
  order the X server processed it, with the device that produced it ("device: master (source)").

Nothing here asks the broker what happened: the editor's text and the X server's order are read from
the programs themselves."""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from kronii.broker.adapters import x_protocol
from kronii.vision.adapters.atspi import AtspiReader
from kronii.vision.adapters.atspi_bus import TEXT
from Xlib import display as xdisplay
from Xlib.ext import xinput

from tests.desktop import DesktopError, start_xvfb, stop_process, wait_until
from tests.integration.broker.broker_support import Broker
from tests.integration.vision.vision_desktop import SYSTEM_PYTHON, A11yDesktop

__all__ = [
    "AGENT_KEYBOARD",
    "EDITOR_TITLE",
    "Editor",
    "Viewer",
    "XiEvent",
    "XiLog",
    "focus_viewers_keyboards",
    "start_editor",
    "start_viewer",
    "start_xi_log",
    "vnc_port",
]

EDITOR_SCRIPT = Path(__file__).with_name("gtk_editor.py")
EDITOR_TITLE = "Kronii Editor"
AGENT_KEYBOARD = "kronii-broker XTEST keyboard"
WAIT_S = 15.0


def _x_env(display: str) -> dict[str, str]:
    return {**os.environ, "DISPLAY": display}


def _xdotool(display: str, *args: str) -> str:
    done = subprocess.run(
        ["xdotool", *args], env=_x_env(display), capture_output=True, text=True, timeout=10, check=False
    )
    if done.returncode != 0:
        raise DesktopError(f"xdotool {' '.join(args)} on {display} failed: {done.stderr.strip()}")
    return done.stdout


# ---- the editor ----------------------------------------------------------------------------------


@dataclass
class Editor:
    """The running gtk_editor.py and an AT-SPI reader of its text."""

    process: subprocess.Popen[str]
    window_id: int
    reader: AtspiReader
    loop: asyncio.AbstractEventLoop
    lines: queue.Queue[str] = field(default_factory=queue.Queue)
    _ref: str = ""

    def _expect(self, wanted: str) -> None:
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                if self.lines.get(timeout=max(0.0, deadline - time.monotonic())) == wanted:
                    return
            except queue.Empty:
                raise DesktopError(f"the editor did not print {wanted} within {WAIT_S}s") from None

    def _send(self, command: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()

    async def _find(self) -> str:
        while True:
            nodes = await self.reader.snapshot()
            found = [n.ref for n in nodes if n.role == "text" and n.name == "Editor"]
            if found:
                return found[0]
            await asyncio.sleep(0.1)

    async def _text(self) -> str:
        if not self._ref:
            self._ref = await asyncio.wait_for(self._find(), WAIT_S)
        bus, path = self._ref.split("|", 1)
        # The whole text, not a snapshot's (which keeps the first 10,000 characters).
        bus_conn = self.reader._require()
        return str(await bus_conn.first(bus, path, TEXT, "GetText", "ii", [0, -1]))

    def text(self) -> str:
        """The editor's whole text, read over AT-SPI."""
        return self.loop.run_until_complete(self._text())

    def clear(self) -> None:
        self._send("clear")
        self._expect("CLEARED")
        wait_until(lambda: self.text() == "", timeout_s=WAIT_S, what="the editor emptied")

    def wait_for_end(self, suffix: str) -> str:
        """The text once it ends with `suffix` (what was typed before it was processed first)."""
        seen: list[str] = []

        def ends() -> bool:
            seen[:] = [self.text()]
            return seen[0].endswith(suffix)

        try:
            wait_until(ends, timeout_s=WAIT_S, interval_s=0.05)
        except DesktopError:
            raise DesktopError(
                f"the editor's text ({len(seen[0])} characters) did not end in {suffix!r}: ...{seen[0][-60:]!r}"
            ) from None
        return seen[0]


def _pump(stream: Any, lines: queue.Queue[str]) -> None:
    for line in stream:
        lines.put(line.rstrip("\n"))


@contextlib.contextmanager
def start_editor(desktop: A11yDesktop) -> Iterator[Editor]:
    process = subprocess.Popen(
        [SYSTEM_PYTHON, str(EDITOR_SCRIPT)],
        env=desktop.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        text=True, start_new_session=True,
    )  # fmt: skip
    loop = asyncio.new_event_loop()
    reader = AtspiReader(desktop.bus_address, call_timeout_s=5.0)
    try:
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=_pump, args=(process.stdout, lines), daemon=True).start()
        found = _xdotool(desktop.display, "search", "--sync", "--onlyvisible", "--name", f"^{EDITOR_TITLE}$")
        loop.run_until_complete(reader.connect())
        editor = Editor(process, int(found.split()[0]), reader, loop, lines)
        editor._expect("READY")
        # The person's keyboard (the core one) is on the editor: their key lands where the agent types.
        _xdotool(desktop.display, "windowactivate", "--sync", str(editor.window_id))
        editor.text()
        yield editor
    finally:
        loop.run_until_complete(reader.close())
        loop.close()
        stop_process(process)


# ---- the viewer ----------------------------------------------------------------------------------


def vnc_port(broker: Broker) -> int:
    """The port the broker's x11vnc listens on, as its readiness says."""
    marker = "x11vnc on 127.0.0.1:"

    def said() -> str:
        return str(httpx.get(f"{broker.url}/readyz", timeout=10).json())

    wait_until(lambda: marker in said(), timeout_s=WAIT_S, what="the broker's x11vnc listening")
    return int(re.search(r"x11vnc on 127\.0\.0\.1:(\d+)", said()).group(1))  # type: ignore[union-attr]


@dataclass
class Viewer:
    """xtightvncviewer on a display of its own; `press` is the person's key, typed into it."""

    display: str
    window_id: int
    process: subprocess.Popen[bytes]

    def press(self, key: str) -> float:
        """xdotool key in the focused viewer window; time.monotonic() just before it ran."""
        started = time.monotonic()
        _xdotool(self.display, "key", "--clearmodifiers", key)
        return started


def focus_viewers_keyboards(display: str, window: int) -> int:
    """Put the keyboard focus of every viewer's own master (x11vnc -multiptr makes one per viewer,
    "x11vnc <host> keyboard") on `window`, as the person clicking into it would; how many there were
    (0 when x11vnc hands the viewers' input to the broker, -pipeinput, which types it where the core
    keyboard's focus is: windowactivate sets that)."""
    connection = xdisplay.Display(display)
    try:
        x_protocol.query_version(connection)
        masters = [
            device.deviceid
            for device in connection.xinput_query_device(xinput.AllDevices).devices
            if device.use == xinput.MasterKeyboard and device.name.startswith("x11vnc ")
        ]
        for master in masters:
            x_protocol.set_focus(connection, master, window)
        connection.sync()
        return len(masters)
    finally:
        connection.close()


@contextlib.contextmanager
def start_viewer(broker: Broker) -> Iterator[Viewer]:
    password_file = broker.folder / "data" / "broker" / "vnc" / "passwd"
    port = vnc_port(broker)
    with start_xvfb() as display:
        process = subprocess.Popen(
            ["xtightvncviewer", "-encodings", "raw", "-passwd", str(password_file), f"127.0.0.1::{port}"],
            env=_x_env(display), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        try:
            found = _xdotool(display, "search", "--sync", "--onlyvisible", "--classname", "vncviewer")
            viewer = Viewer(display, int(found.split()[-1]), process)
            _xdotool(display, "windowactivate", "--sync", str(viewer.window_id))
            wait_until(
                lambda: broker.state()["interactive_reason"] == "viewer",
                timeout_s=WAIT_S,
                what="the broker counting the viewer",
            )
            yield viewer
        finally:
            stop_process(process)


# ---- xinput test-xi2 -----------------------------------------------------------------------------

_EVENT = re.compile(r"^EVENT type \d+ \((\w+)\)")
_DEVICE = re.compile(r"^\s+device: (\d+) \((\d+)\)")
_DETAIL = re.compile(r"^\s+detail: (\d+)")
_LISTED = re.compile(r"^[^A-Za-z]*(.+?)\s+id=(\d+)\s+\[")


@dataclass(frozen=True)
class XiEvent:
    kind: str  # RawKeyPress, RawKeyRelease, ...
    source: int
    detail: int


@dataclass
class XiLog:
    """`xinput test-xi2 --root` on a display, line-buffered into a file."""

    display: str
    path: Path
    process: subprocess.Popen[bytes]

    def mark(self) -> int:
        """Where the log ends now: `events(since=mark)` reads what came after."""
        return self.path.stat().st_size

    def events(self, since: int = 0) -> list[XiEvent]:
        with self.path.open("rb") as handle:
            handle.seek(since)
            text = handle.read().decode(errors="replace")
        found: list[XiEvent] = []
        kind, source = "", 0
        for line in text.splitlines():
            if matched := _EVENT.match(line):
                kind, source = matched.group(1), 0
            elif (matched := _DEVICE.match(line)) and kind.startswith("Raw"):
                source = int(matched.group(2))
            elif (matched := _DETAIL.match(line)) and kind.startswith("Raw") and source:
                found.append(XiEvent(kind, source, int(matched.group(1))))
        return found

    def devices(self) -> dict[int, str]:
        """`xinput list --short`: device id to name."""
        listed = subprocess.run(
            ["xinput", "list", "--short"], env=_x_env(self.display), capture_output=True, text=True,
            timeout=10, check=True,
        ).stdout  # fmt: skip
        return {
            int(matched.group(2)): matched.group(1).strip()
            for line in listed.splitlines()
            if (matched := _LISTED.match(line))
        }


@contextlib.contextmanager
def start_xi_log(display: str, path: Path) -> Iterator[XiLog]:
    with path.open("wb") as out:
        process = subprocess.Popen(
            ["stdbuf", "-oL", "xinput", "test-xi2", "--root"],
            env=_x_env(display), stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    log = XiLog(display, path, process)
    try:
        # test-xi2 lists the devices before it selects its events: a master added and removed once
        # it listens shows in the log as HierarchyChanged, and from then on nothing is missed.
        def probed() -> bool:
            for args in (["create-master", "xi-log-probe"], ["remove-master", "xi-log-probe pointer"]):
                subprocess.run(["xinput", *args], env=_x_env(display), capture_output=True, timeout=10)
            return "(HierarchyChanged)" in path.read_text(errors="replace")

        wait_until(probed, timeout_s=WAIT_S, interval_s=0.1, what="xinput test-xi2 listening")
        yield log
    finally:
        stop_process(process)
