"""The broker's X adapter on a real Xvfb + openbox: agent input through its own master device reaches
the leased window only, is told apart from a person's input, and stops the moment the lease does."""

from __future__ import annotations

import contextlib
import itertools
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kronii.broker.adapters.x_keymap import UnknownKey
from kronii.broker.adapters.x_master import BROKER_MASTER_NAME, XMasterInjector
from kronii.broker.adapters.x_plain_xtest import PlainXTestInjector
from kronii.broker.adapters.x_watch import OwnInput, RawInputWatcher, physical_input_devices
from kronii.broker.ports import InjectionGuard
from kronii.desktop.input_actions import InputAction
from Xlib import display as xdisplay
from Xlib.ext import xinput

from tests.desktop import wait_until
from tests.integration.broker.conftest import InputInbox, find_window, x_env, xdotool
from tests.person_hands import PersonHands

TEXT = "Hello, wörld! ½ € ≠ ✓ 1+1=2"


_epochs = itertools.count(1)


def guard(still_valid: Callable[[], bool] = lambda: True) -> InjectionGuard:
    """A lease of its own for each action (a new epoch): input between two actions is not judged."""
    return InjectionGuard(next(_epochs), still_valid, lambda: None)


def always() -> InjectionGuard:
    return guard()


@contextlib.contextmanager
def watching(display: str, inbox: InputInbox, own: OwnInput | None, debounce_s: float = 0.0) -> Iterator[Any]:
    watcher = RawInputWatcher(
        display,
        inbox.on_user_input,
        inbox.on_hotkey,
        own_input=own,
        debounce_s=debounce_s,
        on_unbrokered_input=inbox.on_unbrokered_input,
    )
    watcher.start()
    try:
        yield watcher
    finally:
        watcher.stop()


def device_names(display: str) -> list[str]:
    connection = xdisplay.Display(display)
    try:
        return [device.name for device in connection.xinput_query_device(xinput.AllDevices).devices]
    finally:
        connection.close()


def core_keyboard_focus(display: str) -> int:
    """The person's keyboard focus (the core keyboard's), not the broker master's."""
    connection = xdisplay.Display(display)
    try:
        return int(connection.get_input_focus().focus.id)
    finally:
        connection.close()


def test_typed_text_arrives_in_an_xterm_including_characters_missing_from_the_keymap(
    injector: XMasterInjector, recording_terminal: Callable[[str], Any]
) -> None:
    terminal = recording_terminal("KroniiTarget")

    assert injector.inject(InputAction("type", text=TEXT), terminal.window_id, always())

    terminal.wait_for(TEXT)


def test_a_key_chord_arrives_with_its_modifiers(
    injector: XMasterInjector, recording_terminal: Callable[[str], Any]
) -> None:
    terminal = recording_terminal("KroniiTarget")

    assert injector.inject(InputAction("key", keys="ctrl+c"), terminal.window_id, always())
    assert injector.inject(InputAction("key", keys="shift+a"), terminal.window_id, always())
    assert injector.inject(InputAction("key", keys="Tab"), terminal.window_id, always())

    # A raw terminal passes Ctrl+C through as the byte 0x03.
    terminal.wait_for("\x03A\t")


def test_typed_text_arrives_in_a_gtk3_entry(x_display: str, injector: XMasterInjector) -> None:
    zenity = subprocess.Popen(
        ["zenity", "--entry", "--title", "kronii entry", "--class", "KroniiEntry"],
        env=x_env(x_display),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        window = find_window(x_display, "KroniiEntry")
        # GTK maps the window before it listens to its keys; an empty focus round trip settles that.
        time.sleep(0.5)

        assert injector.inject(InputAction("type", text=TEXT + "\n"), window, always())

        out, _ = zenity.communicate(timeout=10)
    finally:
        if zenity.poll() is None:
            zenity.kill()
            zenity.wait()
    assert out.rstrip("\n") == TEXT


def window_centre(display: str, window_id: int) -> tuple[int, int]:
    shell = dict(
        line.split("=", 1)
        for line in xdotool(display, "getwindowgeometry", "--shell", str(window_id)).split()
    )
    return int(shell["X"]) + int(shell["WIDTH"]) // 2, int(shell["Y"]) + int(shell["HEIGHT"]) // 2


def test_keys_reach_the_leased_window_while_the_person_focuses_another(
    x_display: str, injector: XMasterInjector, recording_terminal: Callable[[str], Any], person: PersonHands
) -> None:
    leased = recording_terminal("KroniiLeased")
    persons = recording_terminal("KroniiPersons")
    xdotool(x_display, "windowactivate", "--sync", str(persons.window_id))
    # The agent's own pointer rests on the person's window too, so neither the person's focus nor
    # focus-follows-pointer would take the agent's keys to the leased window: only its own focus does.
    x, y = window_centre(x_display, persons.window_id)
    assert injector.inject(InputAction("move", x=x, y=y), 0, always())

    assert injector.inject(InputAction("type", text="agent text"), leased.window_id, always())
    person.type("person")

    leased.wait_for("agent text")
    persons.wait_for("person")
    assert core_keyboard_focus(x_display) == persons.window_id


def test_typing_stops_at_once_when_the_lease_ends(
    injector: XMasterInjector, recording_terminal: Callable[[str], Any]
) -> None:
    terminal = recording_terminal("KroniiTarget")
    calls = 0

    def valid_for_nine_checks() -> bool:
        nonlocal calls
        calls += 1
        return calls <= 9

    # One check before focusing, then one per press and per release: checks 2..9 type "abcd" whole,
    # check 10 refuses the press of "e".
    assert not injector.inject(
        InputAction("type", text="abcdefghij"), terminal.window_id, guard(valid_for_nine_checks)
    )

    terminal.wait_for("abcd")
    assert calls == 10
    time.sleep(0.3)
    assert terminal.received() == "abcd"


def test_an_interrupted_chord_lets_go_of_its_held_keys(
    injector: XMasterInjector, recording_terminal: Callable[[str], Any]
) -> None:
    terminal = recording_terminal("KroniiTarget")
    calls = 0

    def valid_until_ctrl_is_down() -> bool:
        nonlocal calls
        calls += 1
        return calls <= 2

    assert not injector.inject(
        InputAction("key", keys="ctrl+c"), terminal.window_id, guard(valid_until_ctrl_is_down)
    )
    # Ctrl was released: a plain "c" afterwards is a "c", not Ctrl+C.
    assert injector.inject(InputAction("type", text="c"), terminal.window_id, always())

    terminal.wait_for("c")


def test_an_unknown_key_name_is_refused_before_any_key_goes_down(
    injector: XMasterInjector, recording_terminal: Callable[[str], Any]
) -> None:
    terminal = recording_terminal("KroniiTarget")

    with pytest.raises(UnknownKey):
        injector.inject(InputAction("key", keys="ctrl+NoSuchKey"), terminal.window_id, always())
    assert injector.inject(InputAction("type", text="c"), terminal.window_id, always())

    terminal.wait_for("c")


def test_the_agents_own_input_is_not_reported_but_the_persons_at_the_same_moment_is(
    x_display: str,
    injector: XMasterInjector,
    inbox: InputInbox,
    recording_terminal: Callable[[str], Any],
    person: PersonHands,
) -> None:
    terminal = recording_terminal("KroniiTarget")
    with watching(x_display, inbox, injector):
        assert injector.inject(InputAction("type", text="quiet"), terminal.window_id, always())
        assert injector.inject(InputAction("click", x=40, y=40, button=1), 0, always())
        assert injector.inject(InputAction("scroll", dy=2), 0, always())
        terminal.wait_for("quiet")
        time.sleep(0.2)
        assert inbox.drain() == []

        typing = threading.Thread(
            target=injector.inject, args=(InputAction("type", text="x" * 1000), terminal.window_id, always())
        )
        typing.start()
        person.type("person")
        typing.join(10)
        time.sleep(0.2)
    seen = inbox.drain()

    assert seen, "the person's keys were not reported"
    assert {item.source_name for item in seen} == {"test-person XTEST keyboard"}
    assert not {item.source_id for item in seen} & injector.source_ids
    assert {item.kind for item in seen} == {"key"}
    assert inbox.unbrokered.empty()


def test_xdotool_while_the_agent_types_is_unbrokered_input_not_the_person(
    x_display: str, injector: XMasterInjector, inbox: InputInbox, recording_terminal: Callable[[str], Any]
) -> None:
    terminal = recording_terminal("KroniiTarget")
    with watching(x_display, inbox, injector):
        typing = threading.Thread(
            target=injector.inject, args=(InputAction("type", text="x" * 1000), terminal.window_id, always())
        )
        typing.start()
        xdotool(x_display, "type", "--delay", "1", "automation")
        typing.join(10)
        first = inbox.unbrokered.get(timeout=2)
        time.sleep(0.2)

    # The core XTEST device is every plain XTEST client's: not the person, and not the agent.
    assert first.source_name == "Virtual core XTEST keyboard" and first.kind == "key"
    assert inbox.drain() == []


def test_a_burst_of_person_input_is_reported_at_once_then_debounced(
    x_display: str, injector: XMasterInjector, inbox: InputInbox, person: PersonHands
) -> None:
    with watching(x_display, inbox, injector, debounce_s=0.05):
        started = time.monotonic()
        for _ in range(3):
            person.move(5, 5)
        first = inbox.seen.get(timeout=2)
        time.sleep(0.1)
    later = inbox.drain()

    assert first.kind == "motion"
    assert first.source_name == "test-person XTEST pointer"
    assert first.at - started < 1.0
    # Three motions within a few ms of each other: one call, not three.
    assert later == []


def test_the_hotkey_fires_also_with_num_lock_on_and_the_master_is_gone_after_stop(
    x_display: str, inbox: InputInbox, person: PersonHands
) -> None:
    stale = XMasterInjector(x_display)
    stale.start()  # never stopped: stands for a broker that was killed
    hands = XMasterInjector(x_display)
    hands.start()
    assert sum(name.startswith(BROKER_MASTER_NAME) for name in device_names(x_display)) == 4

    with watching(x_display, inbox, hands):
        xdotool(x_display, "key", "ctrl+alt+Escape")
        inbox.hotkeys.get(timeout=3)
        xdotool(x_display, "key", "Num_Lock", "Pause", "Num_Lock")
        inbox.hotkeys.get(timeout=3)
        # From the person's own device too (a viewer's master is one): the STOP keys work from any.
        person.key("ctrl+alt+Escape")
        inbox.hotkeys.get(timeout=3)
        xdotool(x_display, "key", "ctrl+Escape")
        time.sleep(0.2)
        assert inbox.hotkeys.empty()
    hands.stop()

    assert not [name for name in device_names(x_display) if name.startswith(BROKER_MASTER_NAME)]


def test_no_physical_input_devices_on_xvfb_even_with_the_broker_master(
    x_display: str, injector: XMasterInjector
) -> None:
    names = device_names(x_display)
    assert "Xvfb keyboard" in names and "kronii-broker XTEST keyboard" in names

    assert physical_input_devices(x_display) == []


@pytest.fixture
def plain(x_display: str) -> Iterator[PlainXTestInjector]:
    hands = PlainXTestInjector(x_display)
    hands.start()
    try:
        yield hands
    finally:
        hands.stop()


def test_the_fallback_injectors_input_is_the_agents_inside_its_window_and_unbrokered_outside(
    x_display: str,
    plain: PlainXTestInjector,
    inbox: InputInbox,
    recording_terminal: Callable[[str], Any],
    person: PersonHands,
) -> None:
    terminal = recording_terminal("KroniiTarget")
    with watching(x_display, inbox, plain):
        assert plain.inject(InputAction("type", text="fallback ö"), terminal.window_id, always())
        terminal.wait_for("fallback ö")
        time.sleep(0.3)
        assert inbox.drain() == []

        xdotool(x_display, "key", "a")
        seen = inbox.unbrokered.get(timeout=2)
        person.key("b")
        persons = inbox.seen.get(timeout=2)
    (start, end), *_ = plain.injection_windows()

    # Outside its window the core XTEST device is another program's; the person's device is theirs.
    assert start < end < seen.at
    assert seen.source_name == "Virtual core XTEST keyboard"
    assert persons.source_name == "test-person XTEST keyboard"


def test_the_persons_own_device_while_the_fallback_injector_types_is_the_persons_not_the_agents(
    x_display: str,
    plain: PlainXTestInjector,
    inbox: InputInbox,
    recording_terminal: Callable[[str], Any],
    person: PersonHands,
) -> None:
    """Only the core XTEST devices are shared with the fallback's own events: the XTEST slaves of another
    master (the person's here, a VNC viewer's under x11vnc -multiptr) are never taken for the agent's."""
    terminal = recording_terminal("KroniiTarget")
    with watching(x_display, inbox, plain):
        typing = threading.Thread(
            target=plain.inject, args=(InputAction("type", text="x" * 1000), terminal.window_id, always())
        )
        typing.start()
        wait_until(lambda: "xxx" in terminal.received(), timeout_s=10, what="the fallback typing")
        typed_at = time.monotonic()
        person.type("person")
        typing.join(20)
        time.sleep(0.2)
    seen = inbox.drain()
    windows = plain.injection_windows()

    # The case is made when the person began typing inside the injection. The watcher's own
    # timestamps may fall after its end: under load the watcher runs behind the injector, which
    # saw the same key in its queue and ended the injection on it (CI saw exactly that).
    assert any(start <= typed_at <= end for start, end in windows), "the person typed after the injection"
    assert terminal.received().count("x") < 1000, (
        "the injection ran to its end: the person's key was not inside it"
    )
    assert seen, "the person's keys during the fallback's injection were taken for the agent's"
    assert {item.source_name for item in seen} == {"test-person XTEST keyboard"}
    assert inbox.unbrokered.empty()
