"""kronii.desktop.wayland_input on a real headless sway, on the agent's own seat ("kronii-agent"), with
real clients: foot running `cat > FILE` (what it receives lands in FILE, exactly), zenity's GTK3 entry
(it prints the entry on Return), and sway's own view of the seats and of idleness (org_kde_kwin_idle)."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kronii.desktop.wayland_input import (
    KEYMAP_CAPACITY,
    VirtualKeyboard,
    VirtualPointer,
    layout_box,
    layout_size,
    seat_named,
)
from kronii.desktop.wayland_wire import WaylandConnection

from tests.desktop import stop_process, wait_until
from tests.wayland import Sway, WaylandClient, start_sway

AGENT_SEAT = "kronii-agent"


def allow() -> bool:
    return True


def allow_first(count: int) -> Callable[[], bool]:
    """A check that says yes `count` times, then no."""
    calls = [0]

    def check() -> bool:
        calls[0] += 1
        return calls[0] <= count

    return check


def seat_focus(sway: Sway, name: str) -> int | None:
    seat = next(seat for seat in sway.msg("-t", "get_seats") if seat["name"] == name)
    return int(seat["focus"]) if seat.get("focus") else None


@dataclass
class Agent:
    """The agent's seat on a sway: its connection, keyboard and pointer, and the layout's size."""

    sway: Sway
    wire: WaylandConnection
    keyboard: VirtualKeyboard
    pointer: VirtualPointer
    layout: tuple[int, int]

    def click_into(self, window: dict[str, Any]) -> None:
        rect = window["rect"]
        centre = (rect["x"] + rect["width"] // 2, rect["y"] + rect["height"] // 2)
        assert self.pointer.click(*centre, 1, *self.layout, allow)
        wait_until(
            lambda: seat_focus(self.sway, AGENT_SEAT) == window["id"],
            5.0,
            what="the agent seat's keyboard focus on the clicked window",
        )


@contextmanager
def agent_on(sway: Sway) -> Iterator[Agent]:
    sway.msg(f"seat {AGENT_SEAT} fallback false")
    wire = WaylandConnection(sway.socket)
    try:
        seat = seat_named(wire, AGENT_SEAT)
        assert seat is not None, "sway announced no kronii-agent seat"
        agent = Agent(sway, wire, VirtualKeyboard(wire, seat), VirtualPointer(wire, seat), layout_size(wire))
        yield agent
    finally:
        wire.close()


def cat_into(path: Path) -> WaylandClient:
    return WaylandClient(
        "foot", ("foot", "--app-id", "kronii-cat", "sh", "-c", f"cat > '{path}'"), "kronii-cat"
    )


@dataclass
class CatWindow:
    """foot running `cat > FILE`: what the agent types ends up in FILE, one line per Return."""

    path: Path

    def typed(self, agent: Agent, text: str, check: Callable[[], bool] = allow) -> str:
        """Type `text` and a final newline; what arrived in FILE for it."""
        before = self.path.stat().st_size
        assert agent.keyboard.type_text(text, check)
        return self.arrived(agent, before)

    def arrived(self, agent: Agent, before: int) -> str:
        assert agent.keyboard.chord("Return", allow)
        wait_until(lambda: self.path.stat().st_size > before, 10.0, what="the typed line in the file")
        time.sleep(0.2)  # the whole line is written at once; a moment for a stray late byte to show
        data = self.path.read_bytes()[before:]
        assert data.endswith(b"\n"), data
        return data[:-1].decode()


@pytest.fixture(scope="module")
def typing() -> Iterator[tuple[Agent, CatWindow]]:
    with start_sway() as sway, agent_on(sway) as agent:
        runtime = Path(sway.runtime_dir)
        path = runtime / "typed.txt"
        path.touch()
        window = sway.open(cat_into(path))
        agent.click_into(window)
        yield agent, CatWindow(path)


# ---- typing into foot ------------------------------------------------------------------------------


def test_ascii_with_punctuation_and_spaces_arrives_exactly(typing: tuple[Agent, CatWindow]) -> None:
    agent, cat = typing
    text = "Hello, World! 1+1=2; (a|b) & [c] {d} <e> ~`'\"#$%^*_-/\\? @end\tTAB"
    assert cat.typed(agent, text) == text


def test_unicode_accents_cjk_and_emoji_arrive_exactly(typing: tuple[Agent, CatWindow]) -> None:
    agent, cat = typing
    text = "café Straße 20€ 漢字 🙂 ñ Ω"
    assert cat.typed(agent, text) == text


def test_a_thousand_character_text_arrives_exactly(typing: tuple[Agent, CatWindow]) -> None:
    agent, cat = typing
    text = ("The quick brown fox jumps over the lazy dog 0123456789. " * 20)[:1000]
    started = time.monotonic()
    assert cat.typed(agent, text) == text
    print(f"1000 characters typed and read back in {time.monotonic() - started:.2f} s")


def test_more_distinct_characters_than_one_keymap_holds_arrive_exactly(
    typing: tuple[Agent, CatWindow],
) -> None:
    agent, cat = typing
    letters = "".join(chr(point) for point in range(0x4E00, 0x4E00 + 300))  # 300 distinct CJK characters
    text = letters + " abc " + letters[:20]  # back to characters the first keymap had
    assert len(set(text)) > KEYMAP_CAPACITY
    assert cat.typed(agent, text) == text


def test_a_check_saying_no_stops_after_exactly_the_allowed_keys(typing: tuple[Agent, CatWindow]) -> None:
    agent, cat = typing
    before = cat.path.stat().st_size
    assert (
        agent.keyboard.type_text("abcdefgh", allow_first(7)) is False
    )  # a, b, c pressed; d pressed, refused
    assert cat.arrived(agent, before) == "abcd"
    assert cat.typed(agent, "next") == "next"  # nothing held: not shifted, not control characters


def test_a_chord_stopped_while_held_leaves_no_modifier_held(typing: tuple[Agent, CatWindow]) -> None:
    agent, cat = typing
    before = cat.path.stat().st_size
    assert agent.keyboard.chord("shift+a", allow_first(2)) is False  # Shift set, "a" pressed, release refused
    assert agent.keyboard.type_text("after", allow)
    assert cat.arrived(agent, before) == "Aafter"  # the pressed "A" arrived; Shift did not stay held


def test_shift_and_control_chords_reach_the_terminal_modified(typing: tuple[Agent, CatWindow]) -> None:
    agent, cat = typing
    before = cat.path.stat().st_size
    assert agent.keyboard.chord("shift+a", allow)
    assert agent.keyboard.chord("ctrl+b", allow)
    assert agent.keyboard.type_text("x", allow)
    # foot turns Shift+a into "A" and ctrl+b into the control character ^B (0x02), which the tty passes on.
    assert cat.arrived(agent, before) == "A\x02x"


def test_alt_and_super_chords_reach_sways_own_bindings(typing: tuple[Agent, CatWindow]) -> None:
    agent, cat = typing
    runtime = Path(agent.sway.runtime_dir)
    agent.sway.msg(f"bindsym Mod4+l exec touch {runtime / 'super-l'}")
    agent.sway.msg(f"bindsym Mod1+Shift+F4 exec touch {runtime / 'alt-shift-f4'}")
    assert agent.keyboard.chord("super+l", allow)
    assert agent.keyboard.chord("alt+shift+F4", allow)
    wait_until(lambda: (runtime / "super-l").exists(), 5.0, what="sway's Mod4+l binding")
    wait_until(lambda: (runtime / "alt-shift-f4").exists(), 5.0, what="sway's Mod1+Shift+F4 binding")
    assert cat.typed(agent, "l") == "l"  # sway took the chords; the window got neither, nothing held


def test_an_unknown_key_name_is_a_value_error_and_types_nothing(typing: tuple[Agent, CatWindow]) -> None:
    agent, cat = typing
    with pytest.raises(ValueError, match='unknown key "nosuchkey"'):
        agent.keyboard.chord("ctrl+nosuchkey", allow)
    with pytest.raises(ValueError, match="key chord"):
        agent.keyboard.chord("ctrl++", allow)
    with pytest.raises(ValueError, match="control character"):
        agent.keyboard.type_text("a\x07b", allow)
    assert cat.typed(agent, "clean") == "clean"


def test_the_layout_box_spans_every_output_and_clicks_land_from_its_corner(tmp_path: Path) -> None:
    with start_sway() as sway, agent_on(sway) as agent:
        assert layout_box(agent.wire) == (0, 0, 1280, 800)  # start_sway's one output
        sway.msg("create_output")  # a second headless output, left of the first: the box starts at 1280
        sway.msg("output HEADLESS-2 resolution 1024x900 position 1280 0")
        sway.msg("output HEADLESS-1 position 2304 0")
        agent.wire.roundtrip()  # the registry's new wl_output
        left, top, width, height = layout_box(agent.wire)
        assert (left, top, width, height) == (1280, 0, 1024 + 1280, 900)
        assert layout_size(agent.wire) == (width, height)
        sway.msg("focus output HEADLESS-1")
        path = Path(sway.runtime_dir) / "corner.txt"
        path.touch()
        sway.open(cat_into(path))  # on HEADLESS-1, at x >= 2304
        sway.open(WaylandClient("foot", ("foot", "--app-id", "kronii-other"), "kronii-other"))  # takes focus
        window = window_of(sway, "kronii-cat")
        rect = window["rect"]
        assert rect["x"] >= 2304 and seat_focus(sway, AGENT_SEAT) != window["id"]
        centre = (rect["x"] - left + rect["width"] // 2, rect["y"] - top + rect["height"] // 2)
        assert agent.pointer.click(*centre, 1, width, height, allow)
        wait_until(lambda: seat_focus(sway, AGENT_SEAT) == window["id"], 5.0, what="the agent's focus")


# ---- the pointer: focus and wheel ------------------------------------------------------------------


def wheel_reporter(path: Path) -> WaylandClient:
    """foot with xterm mouse reporting on (SGR encoding): wheel notches arrive in FILE as ESC[<64;x;yM
    (up), 65 (down), 66 (left), 67 (right), on the line the next Return ends. The scrollback multiplier
    is 1 so that each notch is one report (foot's default sends three per vertical notch)."""
    script = f"printf '\\033[?1000h\\033[?1006h'; cat > '{path}'"
    return WaylandClient(
        "foot",
        ("foot", "--app-id", "kronii-wheel", "-o", "scrollback.multiplier=1", "sh", "-c", script),
        "kronii-wheel",
    )


def window_of(sway: Sway, app_id: str) -> dict[str, Any]:
    return next(window for window in sway.windows() if window["app_id"] == app_id)


def test_clicks_move_the_agent_seats_focus_and_wheel_notches_arrive(typing: tuple[Agent, CatWindow]) -> None:
    agent, cat = typing
    path = Path(agent.sway.runtime_dir) / "wheel.txt"
    path.touch()
    agent.sway.open(wheel_reporter(path))
    try:
        agent.click_into(window_of(agent.sway, "kronii-cat"))  # back to the first window: focus follows
        agent.click_into(window_of(agent.sway, "kronii-wheel"))
        assert agent.pointer.scroll(2, 3, allow)  # 3 notches down, then 2 right
        assert agent.pointer.scroll(0, -1, allow)
        assert agent.pointer.scroll(0, 5, allow_first(2)) is False  # stopped after 2 notches
        assert agent.keyboard.chord("Return", allow)
        wait_until(lambda: path.read_bytes().endswith(b"\n"), 10.0, what="the reported wheel line")
        buttons = [int(code) for code in re.findall(r"\x1b\[<(6[4-7]);\d+;\d+M", path.read_text())]
        assert buttons == [65, 65, 65, 67, 67, 64, 65, 65]
    finally:
        agent.click_into(window_of(agent.sway, "kronii-cat"))  # the other tests type into it
        assert cat.typed(agent, "still here") == "still here"


# ---- a GTK window ----------------------------------------------------------------------------------


LONG_TEXT = ("bye € The quick brown fox jumps over the lazy dog 0123456789 é漢🙂. " * 20)[:1000]


def test_typing_and_a_control_chord_reach_a_gtk_entry() -> None:
    assert shutil.which("zenity"), "zenity is installed by scripts/install_system_deps.sh"
    with start_sway() as sway, agent_on(sway) as agent:
        printed = Path(sway.runtime_dir) / "zenity.out"  # a file: the a11y daemons keep a pipe open
        dbus = ("dbus-run-session", "--") if shutil.which("dbus-run-session") else ()
        with printed.open("wb") as out:
            zenity = subprocess.Popen(
                [*dbus, "zenity", "--entry", "--text", "Type here"],
                env=sway.env([("GDK_BACKEND", "wayland")]),
                stdout=out,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        try:
            wait_until(
                lambda: any(w["app_id"] == "zenity" for w in sway.windows()), 20.0, what="zenity's window"
            )
            agent.click_into(next(w for w in sway.windows() if w["app_id"] == "zenity"))
            assert agent.keyboard.type_text("hello wörld", allow)
            assert agent.keyboard.chord("ctrl+a", allow)  # select all: the next text replaces it
            # 1,000 characters at the keyboard's pace: a GTK client at full speed falls behind and sway
            # disconnects it ("Lost connection to Wayland compositor").
            assert agent.keyboard.type_text(LONG_TEXT, allow)
            assert agent.keyboard.chord("Return", allow)  # zenity prints the entry and exits
            assert zenity.wait(timeout=10) == 0
        finally:
            stop_process(zenity)
        assert printed.read_text().splitlines()[-1] == LONG_TEXT


# ---- idleness per seat -----------------------------------------------------------------------------


@dataclass
class IdleWatch:
    """An org_kde_kwin_idle timeout on one seat: the events sway sent for it, in order."""

    events: list[str]


def watch_idle(wire: WaylandConnection, seat_name: str, timeout_ms: int) -> IdleWatch:
    idle = wire.bind("org_kde_kwin_idle", 1)
    assert idle is not None, "sway 1.7 offers org_kde_kwin_idle"
    seat = seat_named(wire, seat_name)
    assert seat is not None
    watch = IdleWatch([])
    timeout = wire.new_object(
        "org_kde_kwin_idle_timeout",
        lambda _oid, op, _args: watch.events.append("idle" if op == 0 else "resumed"),
    )
    wire.request(idle, 0, timeout, seat, timeout_ms)
    return watch


def pump(wire: WaylandConnection, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        if wire.read(left):
            wire.dispatch()


def test_agent_typing_resets_only_the_agent_seats_idle() -> None:
    with start_sway() as sway, agent_on(sway) as agent:
        path = Path(sway.runtime_dir) / "idle.txt"
        path.touch()
        agent.click_into(sway.open(cat_into(path)))
        watcher = WaylandConnection(sway.socket)
        try:
            person = watch_idle(watcher, "seat0", 300)
            agents = watch_idle(watcher, AGENT_SEAT, 300)
            pump(watcher, 1.0)
            assert person.events == ["idle"] and agents.events == ["idle"]
            for _ in range(6):  # 1.5 s of agent typing, longer than the timeout
                assert agent.keyboard.type_text("typing ", allow)
                pump(watcher, 0.25)
            assert agents.events[:2] == ["idle", "resumed"]  # the agent's seat saw the keys
            assert person.events == ["idle"]  # the person's seat stayed idle throughout
        finally:
            watcher.close()
