"""What both injectors share: an InputAction turned into XTEST events on one connection, each event
asked for by still_valid() first, and whatever is held let go when an action stops. Both injectors
(x_master.py, x_plain_xtest.py) are blocking and meant for one worker thread."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kronii.broker.adapters.x_keymap import CHARACTER_KEYSYMS, Keymap, keysym_for_character, keysym_for_name
from kronii.desktop.input_actions import InputAction
from Xlib import XK, X
from Xlib.ext import xtest

__all__ = ["InjectorUnavailable", "Performer", "Sender", "drain_mapping_changes", "run_action"]

_SCROLL_BUTTONS = {(0, -1): 4, (0, 1): 5, (-1, 0): 6, (1, 0): 7}
# At most this many agent events the X server may not have taken yet: a round trip (XSync) after
# each batch, so a person's key overtakes at most these, however long the action.
IN_FLIGHT_EVENTS = 32


class InjectorUnavailable(RuntimeError):
    """The X server cannot host the injector (no XInput 2.2 or XTEST, or the master was not created)."""


class _Stopped(Exception):
    """still_valid() said no: the action ends here."""


class Sender:
    """XTEST events on one connection, each one asked for by still_valid() first; remembers what is
    held down so an interrupted action can let go of it."""

    def __init__(self, display: Any, still_valid: Callable[[], bool]) -> None:
        self._display = display
        self._still_valid = still_valid
        self._held: list[tuple[int, int]] = []
        self._unsynced = 0

    def _check(self) -> None:
        if not self._still_valid():
            raise _Stopped

    def _send(self, event_type: int, detail: int, **where: int) -> None:
        """One event, asked for first and written to the X server at once (python-xlib queues its
        requests until a flush: without one a whole action, checked in a few microseconds, went out
        after a stop that came while it was typed), and a round trip every IN_FLIGHT_EVENTS."""
        self._check()
        xtest.fake_input(self._display, event_type, detail, **where)
        self._unsynced += 1
        if self._unsynced >= IN_FLIGHT_EVENTS:
            self._display.sync()
            self._unsynced = 0
        else:
            self._display.flush()

    def press(self, event_type: int, detail: int) -> None:
        self._send(event_type, detail)
        self._held.append((event_type + 1, detail))

    def release(self, event_type: int, detail: int) -> None:
        self._send(event_type, detail)
        self._held.remove((event_type, detail))

    def move(self, x: int, y: int) -> None:
        root = self._display.screen().root.id
        self._send(X.MotionNotify, 0, root=root, x=x, y=y)

    def let_go(self) -> None:
        """Releases are sent after a stop on purpose: a key left down would repeat forever."""
        for event_type, detail in reversed(self._held):
            xtest.fake_input(self._display, event_type, detail)
        self._held.clear()


class Performer:
    """Turns an InputAction into XTEST events on `display`, keysyms resolved through `keymap`."""

    def __init__(self, display: Any, keymap: Keymap) -> None:
        self._display = display
        self.keymap = keymap

    def perform(self, action: InputAction, sender: Sender) -> None:
        if action.kind == "key":
            self._chord(action.keys, sender)
        elif action.kind == "type":
            self._type(action.text, sender)
        elif action.kind == "move":
            sender.move(action.x, action.y)
        elif action.kind == "click":
            sender.move(action.x, action.y)
            self._button(action.button, 1, sender)
        elif action.kind == "scroll":
            self._scroll(action.dx, action.dy, sender)

    def _chord(self, chord: str, sender: Sender) -> None:
        keysyms = [keysym_for_name(name) for name in chord.split("+")]
        keycodes: list[int] = []
        shift = self.keymap.find(XK.XK_Shift_L)[0]
        for keysym in keysyms:
            keycode, needs_shift = self.keymap.find(keysym)
            if needs_shift and shift not in keycodes:
                keycodes.append(shift)
            keycodes.append(keycode)
        for keycode in keycodes:
            sender.press(X.KeyPress, keycode)
        for keycode in reversed(keycodes):
            sender.release(X.KeyRelease, keycode)

    def _type(self, text: str, sender: Sender) -> None:
        shift = self.keymap.find(XK.XK_Shift_L)[0]
        for character in text:
            if not character.isprintable() and character not in CHARACTER_KEYSYMS:
                continue
            keycode, needs_shift = self.keymap.find(keysym_for_character(character))
            if needs_shift:
                sender.press(X.KeyPress, shift)
            sender.press(X.KeyPress, keycode)
            sender.release(X.KeyRelease, keycode)
            if needs_shift:
                sender.release(X.KeyRelease, shift)

    @staticmethod
    def _button(button: int, times: int, sender: Sender) -> None:
        for _ in range(times):
            sender.press(X.ButtonPress, button)
            sender.release(X.ButtonRelease, button)

    def _scroll(self, dx: int, dy: int, sender: Sender) -> None:
        if dy:
            self._button(_SCROLL_BUTTONS[(0, 1 if dy > 0 else -1)], abs(dy), sender)
        if dx:
            self._button(_SCROLL_BUTTONS[(1 if dx > 0 else -1, 0)], abs(dx), sender)


def drain_mapping_changes(display: Any) -> bool:
    """Empties the event queue (the injector selects nothing, but MappingNotify goes to every client)."""
    changed = False
    while display.pending_events():
        if display.next_event().type == X.MappingNotify:
            changed = True
    return changed


def run_action(action: InputAction, performer: Performer, sender: Sender, display: Any) -> bool:
    try:
        performer.perform(action, sender)
    except _Stopped:
        sender.let_go()
        return False
    finally:
        display.sync()
    return True
