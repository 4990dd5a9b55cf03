"""Fixtures for the broker's X adapter tests: a private Xvfb + openbox per test, the broker's injector on
it, and X clients that write down what they receive.

The tools are installed by `make sysdeps`; a missing one fails the test rather than skipping it."""

from __future__ import annotations

import os
import queue
import shlex
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from kronii.broker.adapters.x_master import XMasterInjector
from kronii.broker.adapters.x_watch import UserInputSeen

from tests.desktop import DesktopError, start_xvfb, stop_process, wait_until
from tests.notification_server import server_bus  # noqa: F401  (a fixture, shared)
from tests.person_hands import PersonHands

REQUIRED_TOOLS = ("Xvfb", "openbox", "xdotool", "xterm", "zenity")


@pytest.fixture
def x_display() -> Iterator[str]:
    missing = [tool for tool in REQUIRED_TOOLS if shutil.which(tool) is None]
    assert not missing, f"missing {', '.join(missing)}: run `make sysdeps`"
    with start_xvfb() as display:
        yield display


@pytest.fixture
def person(x_display: str) -> Iterator[PersonHands]:
    """The person's keyboard and mouse: a master device of their own, as a VNC viewer's is (xdotool
    is automation around the broker, not the person)."""
    with PersonHands(x_display) as hands:
        yield hands


@pytest.fixture
def injector(x_display: str) -> Iterator[XMasterInjector]:
    hands = XMasterInjector(x_display)
    hands.start()
    try:
        yield hands
    finally:
        hands.stop()


def x_env(display: str) -> dict[str, str]:
    # NO_AT_BRIDGE: GTK would otherwise wait for an accessibility bus that does not exist here.
    return {**os.environ, "DISPLAY": display, "NO_AT_BRIDGE": "1"}


def xdotool(display: str, *args: str) -> str:
    done = subprocess.run(
        ["xdotool", *args], env=x_env(display), capture_output=True, text=True, timeout=10, check=False
    )
    if done.returncode != 0:
        raise DesktopError(f"xdotool {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def find_window(display: str, wm_class: str) -> int:
    return int(xdotool(display, "search", "--sync", "--onlyvisible", "--class", f"^{wm_class}$").split()[0])


@dataclass
class RecordingTerminal:
    """An xterm whose terminal is raw (no echo, no line buffering) and whose input `cat` copies to a file,
    so every key that reaches the window shows up in `received()` at once."""

    window_id: int
    output: Path
    process: subprocess.Popen[bytes] = field(repr=False)

    def received(self) -> str:
        return self.output.read_text(errors="replace") if self.output.exists() else ""

    def wait_for(self, text: str, timeout_s: float = 5.0) -> None:
        wait_until(lambda: self.received() == text, timeout_s=timeout_s, what=f"xterm receiving {text!r}")


@pytest.fixture
def recording_terminal(x_display: str, tmp_path: Path) -> Iterator[Any]:
    opened: list[RecordingTerminal] = []

    def open_terminal(wm_class: str) -> RecordingTerminal:
        output = tmp_path / f"{wm_class}.txt"
        script = f"stty raw -echo; exec cat > {shlex.quote(str(output))}"
        process = subprocess.Popen(
            ["xterm", "-u8", "-class", wm_class, "-e", "sh", "-c", script],
            env={**x_env(x_display), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        terminal = RecordingTerminal(find_window(x_display, wm_class), output, process)
        opened.append(terminal)
        # The file appears once stty has run, so nothing typed later meets a cooked terminal.
        wait_until(output.exists, what=f"{wm_class} ready")
        return terminal

    try:
        yield open_terminal
    finally:
        for terminal in opened:
            stop_process(terminal.process)


class InputInbox:
    """Collects watcher callbacks (made on the watcher thread) for the test thread: the person's
    input, unbrokered input (the core XTEST device: xdotool and the like), the STOP keys."""

    def __init__(self) -> None:
        self.seen: queue.Queue[UserInputSeen] = queue.Queue()
        self.unbrokered: queue.Queue[UserInputSeen] = queue.Queue()
        self.hotkeys: queue.Queue[float] = queue.Queue()

    def on_user_input(self, seen: UserInputSeen) -> None:
        self.seen.put(seen)

    def on_unbrokered_input(self, seen: UserInputSeen) -> None:
        self.unbrokered.put(seen)

    def on_hotkey(self) -> None:
        self.hotkeys.put(time.monotonic())

    def drain(self) -> list[UserInputSeen]:
        items = []
        while not self.seen.empty():
            items.append(self.seen.get_nowait())
        return items


@pytest.fixture
def inbox() -> InputInbox:
    return InputInbox()


@pytest.fixture
def session_bus() -> Iterator[str]:
    from tests.desktop import start_session_bus

    with start_session_bus() as address:
        yield address


@pytest.fixture(scope="session", autouse=True)
def _vncdotool_reactor() -> Iterator[None]:
    # vncdotool runs one Twisted reactor per process, which cannot start again once stopped: it is
    # shut down once, after every test of the run that used it.
    yield
    import sys

    if "vncdotool.api" in sys.modules:
        sys.modules["vncdotool.api"].shutdown()
