"""The real applications of the conformance suite: how each starts on the accessible desktop (a home
of its own, its stdout and stderr kept as its own output), and what the tester reads of it afterwards
with an AtspiReader of its own, independently of the engine: the objects of the app's process."""

from __future__ import annotations

import asyncio
import contextlib
import queue
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from kronii.vision.adapters.atspi import AtspiReader
from kronii.vision.core.context import RawNode

from tests.desktop import DesktopError, stop_process
from tests.integration.vision.vision_desktop import A11yDesktop

__all__ = ["PAGE", "AppSpec", "RunningApp", "Seen", "look", "missing_programs", "reset", "start_app"]

PAGE = Path(__file__).with_name("page.html")
START_TIMEOUT_S = 30.0
# GTK's caret blinks forever, so a screen never settles; the tester turns the blink off in each app's home.
_GTK_SETTINGS = "[Settings]\ngtk-cursor-blink=false\ngtk-enable-animations=false\n"


@dataclass(frozen=True)
class AppSpec:
    """One application as the suite starts it. `argv` gets the app's private home folder."""

    key: str
    toolkit: str
    argv: Callable[[Path], Sequence[str]]
    # The app is up when a showing window of its process has this many objects under it.
    ready_objects: int = 8
    env: dict[str, str] = field(default_factory=dict)
    # What the tester does (through its own AT-SPI reader) before each case: (object name, action).
    reset: tuple[tuple[str, str], ...] = ()
    # Only output lines holding this are the app's own output ("" keeps every line).
    keep: str = ""
    # The app's own output is on stderr too (Chromium's console); otherwise stderr is its warnings.
    stderr_output: bool = False


@dataclass(frozen=True)
class Seen:
    """What the tester saw of the app: its accessible objects and every line it printed so far."""

    nodes: tuple[RawNode, ...]
    output: tuple[str, ...]
    exit_code: int | None

    def named(self, name: str, roles: frozenset[str] | None = None) -> list[RawNode]:
        return [n for n in self.nodes if n.name == name and (roles is None or n.role in roles)]

    @staticmethod
    def shown(node: RawNode) -> bool:
        """On screen: state showing, or (GTK4 sets no showing below the window) visible with a place on
        the screen (GTK3's closed menus are visible at -2^31, 1 px wide)."""
        if "showing" in node.states:
            return True
        box = node.bounds
        return (
            "visible" in node.states
            and box is not None
            and box.x > -10_000
            and box.y > -10_000
            and box.width > 1
        )

    def texts(self, roles: frozenset[str]) -> list[str]:
        return [n.text for n in self.nodes if n.role in roles and self.shown(n)]

    def showing(self, name: str) -> bool:
        return any(n.name == name and self.shown(n) for n in self.nodes)


@dataclass
class RunningApp:
    spec: AppSpec
    process: subprocess.Popen[str]
    home: Path
    bus_address: str
    lines: queue.Queue[str] = field(default_factory=queue.Queue)
    output: list[str] = field(default_factory=list)

    def drain(self) -> tuple[str, ...]:
        while True:
            try:
                line = self.lines.get_nowait()
                if self.spec.keep in line:
                    self.output.append(line)
            except queue.Empty:
                return tuple(self.output)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None


async def _nodes(bus_address: str, pid: int) -> tuple[RawNode, ...]:
    reader = AtspiReader(bus_address, time_budget_s=10.0)
    await reader.connect()
    try:
        nodes = await reader.snapshot(max_depth=40, max_objects=3000)
    finally:
        await reader.close()
    return tuple(n for n in nodes if n.pid == pid)


def look(app: RunningApp) -> Seen:
    """The app's objects now (the tester's own reader) and its output so far."""
    nodes = asyncio.run(_nodes(app.bus_address, app.process.pid)) if app.alive else ()
    return Seen(nodes, app.drain(), app.process.poll())


def _pump(stream: IO[str], lines: queue.Queue[str]) -> None:
    for line in stream:
        lines.put(line.rstrip("\n"))


def _home(folder: Path) -> dict[str, str]:
    env = {"HOME": str(folder)}
    for name, sub in (("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share"),
                      ("XDG_STATE_HOME", ".local/state"), ("XDG_CACHE_HOME", ".cache")):  # fmt: skip
        (folder / sub).mkdir(parents=True, exist_ok=True)
        env[name] = str(folder / sub)
    for version in ("gtk-3.0", "gtk-4.0"):
        (folder / ".config" / version).mkdir(exist_ok=True)
        (folder / ".config" / version / "settings.ini").write_text(_GTK_SETTINGS)
    return env


def _wait_ready(app: RunningApp) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if not app.alive:
            raise DesktopError(f"{app.spec.key} exited ({app.process.returncode}): {app.drain()[-20:]}")
        seen = look(app)
        windows = [n for n in seen.nodes if n.depth == 1 and seen.shown(n)]
        if windows and len(seen.nodes) >= app.spec.ready_objects:
            return
        time.sleep(0.2)
    raise DesktopError(f"{app.spec.key} showed no window in {START_TIMEOUT_S}s: {app.drain()[-20:]}")


@contextlib.contextmanager
def start_app(desktop: A11yDesktop, spec: AppSpec) -> Iterator[RunningApp]:
    """Start the app with accessibility on (GTK's bridge, Qt's QT_ACCESSIBILITY) in a home of its own;
    yields once its window is in the accessibility tree."""
    with tempfile.TemporaryDirectory(prefix=f"kronii-conf-{spec.key}-") as tmp:
        home = Path(tmp)
        env = {**desktop.env, **_home(home), "QT_ACCESSIBILITY": "1", "QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1"}
        env.update(spec.env)
        env.pop("NO_AT_BRIDGE", None)
        process = subprocess.Popen(
            list(spec.argv(home)), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if spec.stderr_output else subprocess.DEVNULL, text=True, start_new_session=True, cwd=home,
        )  # fmt: skip
        app = RunningApp(spec, process, home, desktop.bus_address)
        assert process.stdout is not None
        pump = threading.Thread(target=_pump, args=(process.stdout, app.lines), daemon=True)
        pump.start()
        try:
            _wait_ready(app)
            yield app
        finally:
            stop_process(process)
            pump.join(timeout=2)
            if process.stdout is not None:
                with contextlib.suppress(OSError):
                    process.stdout.close()


def chromium_argv(home: Path) -> list[str]:
    return [
        # --password-store=basic: the test desktop has no unlocked login keyring, so without it Chromium
        # asks gnome-keyring to create one and that prompt (gcr-prompter) is the window in front.
        "chromium", "--force-renderer-accessibility", "--password-store=basic", "--no-sandbox", "--no-first-run",
        "--disable-gpu",
        f"--user-data-dir={home / 'chromium'}", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--enable-logging=stderr", "--v=0", "--window-size=900,700", "--window-position=0,0",
        f"--app=file://{PAGE}",
    ]  # fmt: skip


def zenity(*args: str) -> Callable[[Path], Sequence[str]]:
    return lambda home: ["zenity", *args]


def plain(*argv: str) -> Callable[[Path], Sequence[str]]:
    return lambda home: list(argv)


def missing_programs() -> list[str]:
    """The apps' programs that are missing (the suite fails, never skips, naming them)."""
    import shutil

    programs = ("zenity", "galculator", "gnome-calculator", "gnome-text-editor", "featherpad", "chromium")
    return [p for p in programs if shutil.which(p) is None]


async def _reset(bus_address: str, pid: int, steps: tuple[tuple[str, str], ...]) -> None:
    reader = AtspiReader(bus_address, time_budget_s=10.0)
    await reader.connect()
    try:
        nodes = [n for n in await reader.snapshot(max_depth=40, max_objects=3000) if n.pid == pid]
        for name, action in steps:
            node = next((n for n in nodes if n.name == name and action in n.actions), None)
            if node is None:
                raise DesktopError(f"the tester found no {name!r} with the action {action!r} to reset with")
            await reader.do_action(node.ref, action)
    finally:
        await reader.close()


def reset(app: RunningApp) -> None:
    """The tester's own reset before a case (galculator's AC), through its own reader."""
    if app.spec.reset:
        asyncio.run(_reset(app.bus_address, app.process.pid, app.spec.reset))
