"""The sensor's Wayland display on a real headless sway, with real clients of four toolkits (foot, GTK3,
GTK4, Qt5): the focused window, its app id and title, from the protocols any wlroots compositor offers
(zwlr_foreign_toplevel_manager_v1, org_kde_kwin_idle), checked against what sway itself says. And on
cage, a wlroots compositor without a window list: idle alone, and the sentence that says why."""

from __future__ import annotations

import queue
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kronii.desktop.session import probe
from kronii.sensor.adapters.wayland import WaylandDisplay
from kronii.sensor.core.model import Focus

from tests.wayland import CLIENTS, Sway, WaylandClient, foot_showing, start_cage, start_sway


@pytest.fixture(scope="module")
def sway() -> Iterator[Sway]:
    with start_sway() as session:
        for client in CLIENTS:
            session.open(client)
        yield session


class Seen:
    """The focus changes a WaylandDisplay reported, in order."""

    def __init__(self) -> None:
        self.changes: queue.Queue[Focus] = queue.Queue()

    def __call__(self, focus: Focus) -> None:
        self.changes.put(focus)

    def until(self, app_id: str, timeout_s: float = 5.0) -> Focus:
        deadline = time.monotonic() + timeout_s
        while (left := deadline - time.monotonic()) > 0:
            try:
                focus = self.changes.get(timeout=left)
            except queue.Empty:
                break
            if focus.app_name == app_id:
                return focus
        raise AssertionError(f"no focus change to {app_id} within {timeout_s} s")


@pytest.fixture
def display(sway: Sway) -> Iterator[tuple[WaylandDisplay, Seen]]:
    facts = probe(sway.env())
    source = WaylandDisplay(facts)
    seen = Seen()
    source.start(seen)
    try:
        yield source, seen
    finally:
        source.close()


def _sways_focused(sway: Sway) -> dict[str, object]:
    return next(window for window in sway.windows() if window["focused"])


@pytest.mark.parametrize("client", CLIENTS, ids=[client.kind for client in CLIENTS])
def test_a_window_sway_focuses_is_the_focus_with_its_app_id_and_title(
    sway: Sway, display: tuple[WaylandDisplay, Seen], client: WaylandClient
) -> None:
    source, seen = display
    other = next(item for item in CLIENTS if item is not client)
    sway.focus(other.app_id)
    seen.until(other.app_id)
    sway.focus(client.app_id)
    focus = seen.until(client.app_id)
    window = _sways_focused(sway)
    assert window["app_id"] == client.app_id
    assert focus.title == window["name"] and focus.title
    assert focus.wm_class == client.app_id and focus.window_id != 0
    assert source.problem == "" and source.has_idle


def test_the_display_on_sway_names_the_compositor_and_offers_focus_and_idle(
    display: tuple[WaylandDisplay, Seen],
) -> None:
    source, _ = display
    assert source.display_name.startswith("Wayland (sway)")
    assert source.has_focus and source.has_idle


def test_a_title_the_window_changes_arrives_with_the_same_window(
    sway: Sway, display: tuple[WaylandDisplay, Seen]
) -> None:
    _, seen = display
    script = 'printf "\\033]2;first title\\007"; sleep 1; printf "\\033]2;second title\\007"; sleep 60'
    titled = WaylandClient("foot", ("foot", "--app-id", "foot-titled", "sh", "-c", script), "foot-titled")
    sway.open(titled)
    sway.focus("foot-titled")
    first = seen.until("foot-titled")
    deadline = time.monotonic() + 5
    second = first
    while second.title != "second title" and time.monotonic() < deadline:
        second = seen.until("foot-titled")
    assert second.title == "second title"
    assert second.window_id == first.window_id


def test_closing_the_focused_window_gives_the_focus_sway_moves_to(
    sway: Sway, display: tuple[WaylandDisplay, Seen]
) -> None:
    _, seen = display
    closing = WaylandClient("foot", ("foot", "--app-id", "foot-closing"), "foot-closing")
    sway.open(closing)
    sway.focus("foot-closing")
    seen.until("foot-closing")
    sway.msg('[app_id="^foot-closing$"] kill')
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        focused = [window for window in sway.windows() if window["focused"]]
        if focused and focused[0]["app_id"] != "foot-closing":
            break
        time.sleep(0.05)
    assert focused, "sway focused no window after the kill"
    assert seen.until(str(focused[0]["app_id"])).app_name == focused[0]["app_id"]


def test_idle_grows_without_input_and_input_on_the_seat_resets_it(
    sway: Sway, display: tuple[WaylandDisplay, Seen]
) -> None:
    source, _ = display
    time.sleep(2.2)
    idle = source.idle_ms()
    assert idle >= 1500, idle
    sway.focus("foot")
    subprocess.run(
        ["wtype", " "], env=sway.env(), check=True, timeout=10
    )  # the virtual keyboard is seat input
    deadline = time.monotonic() + 3
    while source.idle_ms() != 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert source.idle_ms() == 0


def test_on_cage_without_a_window_list_idle_still_grows_and_the_display_says_why_focus_is_missing(
    tmp_path: Path,
) -> None:
    shown = tmp_path / "shown.txt"
    shown.write_text("a kiosk\n")
    with start_cage(foot_showing(shown, "kronii-kiosk")) as cage:
        source = WaylandDisplay(probe(cage.env()))
        seen = Seen()
        source.start(seen)
        try:
            assert source.has_idle and not source.has_focus
            assert source.display_name.startswith("Wayland (cage) ")
            assert "cage offers no window list (zwlr_foreign_toplevel_manager_v1)" in source.problem
            time.sleep(2.2)
            assert source.idle_ms() >= 1500  # no input device: the notifier's idle, not a stand-in
            assert seen.changes.empty()  # no focus is made up
        finally:
            source.close()
