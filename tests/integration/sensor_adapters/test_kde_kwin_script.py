"""kronii on a real KWin (KDE Plasma 5.27's kwin_wayland, headless, tests/kde.py): the session is found
as KDE with KWin's scripting on the bus; the sensor's KdeDisplay loads kronii's KWin script and is told
each focused window of three toolkits (GTK3 galculator, GTK4 gnome-calculator, Qt5 featherpad) with
its app id, title and pid, and a title change (weston-terminal renaming itself: foot maps no window on a
headless KWin 5.27 here); a call to its Focus method from any other program on the bus is
refused; idle comes from KWin's idle protocol; closing unloads the script."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kronii.desktop.session import capability, probe
from kronii.sensor.adapters.kwin import FOCUS_INTERFACE, FOCUS_PATH, KdeDisplay
from kronii.sensor.core.model import Focus

from tests.kde import KWin, start_kwin
from tests.wayland import CLIENTS, WaylandClient

GTK3, GTK4, QT5 = CLIENTS[1], CLIENTS[2], CLIENTS[3]


def wait_for(check: Callable[[], bool], what: str, timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"{what} did not happen within {timeout_s} s")


@pytest.fixture(scope="module")
def kwin() -> Iterator[KWin]:
    with start_kwin() as session:
        yield session


@pytest.fixture
def display(kwin: KWin) -> Iterator[tuple[KdeDisplay, list[Focus]]]:
    facts = probe(kwin.env())
    seen: list[Focus] = []
    source = KdeDisplay(facts, address=kwin.session_bus)
    source.start(seen.append)
    try:
        yield source, seen
    finally:
        source.close()


def _script_loaded(kwin: KWin) -> bool:
    done = subprocess.run(
        ["gdbus", "call", "--session", "--dest", "org.kde.KWin", "--object-path", "/Scripting",
         "--method", "org.kde.kwin.Scripting.isScriptLoaded", "kronii-focus"],
        env=kwin.env(), capture_output=True, text=True, timeout=10,
    )  # fmt: skip
    return done.stdout.strip() == "(true,)"


def test_the_session_is_kde_with_kwins_scripting_and_the_sensor_can_follow_the_focus(kwin: KWin) -> None:
    facts = probe(kwin.env())
    assert facts.kind == "wayland" and facts.family == "kde" and facts.kwin_scripting
    focus = capability(facts, "sensor", "focus")
    assert focus.ok and "kronii's KWin script" in focus.detail
    assert capability(facts, "sensor", "idle").ok


def test_each_focused_window_of_three_toolkits_reaches_the_sensor_with_its_app_id_and_pid(
    kwin: KWin, display: tuple[KdeDisplay, list[Focus]]
) -> None:
    source, seen = display
    assert source.problem == ""
    assert _script_loaded(kwin)
    for client in (GTK4, QT5, GTK3):
        process = kwin.open(client)
        app = client.app_id.lower()
        wait_for(lambda: bool(seen) and seen[-1].wm_class.lower() == app, f"{app} focused")  # noqa: B023
        focus = seen[-1]
        assert focus.pid == process.pid and focus.window_id and focus.title, focus
    assert len({focus.window_id for focus in seen if focus.window_id}) >= 3


def test_a_title_change_of_the_focused_window_reaches_the_sensor(
    kwin: KWin, display: tuple[KdeDisplay, list[Focus]], tmp_path: Path
) -> None:
    _, seen = display
    shell = tmp_path / "rename.sh"
    shell.write_text("#!/bin/sh\nsleep 1.5; printf '\\033]2;kronii renamed it\\007'; sleep 600\n")
    shell.chmod(0o755)
    terminal = "org.freedesktop.weston.wayland-terminal"
    kwin.open(WaylandClient("weston-terminal", ("weston-terminal", f"--shell={shell}"), terminal))
    wait_for(lambda: bool(seen) and seen[-1].wm_class == terminal, "weston-terminal focused")
    wait_for(lambda: seen[-1].title == "kronii renamed it", "its new title")
    assert seen[-1].wm_class == terminal


def test_a_focus_call_from_another_program_is_refused_and_not_reported(
    kwin: KWin, display: tuple[KdeDisplay, list[Focus]]
) -> None:
    source, seen = display
    wait_for(lambda: bool(seen), "the first focus")
    before = len(seen)
    bus = source._bus.bus
    assert bus is not None and bus.unique_name
    forged = subprocess.run(
        ["gdbus", "call", "--session", "--dest", bus.unique_name, "--object-path", FOCUS_PATH,
         "--method", f"{FOCUS_INTERFACE}.Focus", "bank", "bank", "Your bank", "1", "{00000000-0000-0000-0000-000000000001}"],
        env=kwin.env(), capture_output=True, text=True, timeout=10,
    )  # fmt: skip
    assert forged.returncode != 0 and "only KWin tells the focus" in forged.stderr
    time.sleep(0.3)
    assert len(seen) == before and all(focus.app_name != "bank" for focus in seen)


def test_idle_grows_without_input_and_closing_unloads_the_script(kwin: KWin) -> None:
    source = KdeDisplay(probe(kwin.env()), address=kwin.session_bus)
    source.start(lambda _focus: None)
    try:
        assert source.has_idle
        wait_for(lambda: _script_loaded(kwin), "the script loaded")
        first = source.idle_ms()
        time.sleep(1.5)
        assert source.idle_ms() >= first + 1000
    finally:
        source.close()
    assert not _script_loaded(kwin)
