"""The broker's hands on an X desktop: agent input through XTEST, on the broker's own master device.

`XMasterInjector` (setting `broker.injection = "master"`, the default) creates an XInput2 master device
pair, "kronii-broker pointer"/"kronii-broker keyboard"; the server gives it two XTEST slaves
("kronii-broker XTEST pointer"/"... keyboard"). Its connection's ClientPointer is that master, so every
XTEST request on it comes out of those slaves. Hence:

- the agent's raw events carry the broker's slave ids as `sourceid`, and anything else, including
  `xdotool` run by whoever, is a person's input (the watcher in x_watch.py relies on this);
- the agent's keyboard has its own focus (XISetFocus) and its own modifier state: its keys reach the
  leased window while the person types elsewhere, and the person's held Shift does not leak in;
- the agent's pointer is a second cursor; the person's cursor does not move under them.

Window managers are not MPX-aware: the core FocusIn the agent's focus produces makes openbox (and most
others) set _NET_ACTIVE_WINDOW to the leased window, though the person's keyboard focus stays where it
was; a click by the agent is a core click too, which the window manager may answer by activating the
window for the person.

`PlainXTestInjector` (`broker.injection = "xtest"`) is the fallback for servers where creating a master
fails: plain XTEST on the core devices, as xdotool does. It is weaker: its events come from
"Virtual core XTEST pointer/keyboard", the same devices any other XTEST client (xdotool, a remote
desktop tool) uses, so it can only record *when* it injected; any XTEST event inside such a window is
taken as the agent's, and xdotool run by someone else during that window looks like the agent. Setting
the focus for its keys moves the person's focus too.

Both are blocking and meant for one worker thread. Characters missing from the keyboard map are typed
the way xdotool does: a spare keycode (one no key sends) is bound to the keysym and pressed. Bindings
stay until stop() (clients look keycodes up lazily, so an early unbind loses characters in flight); the
spare keycodes are reused in turn when a text needs more of them.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from kronii.broker.adapters import x_protocol
from kronii.desktop.input_actions import InputAction
from Xlib import XK, X
from Xlib import display as xdisplay
from Xlib import error as xerror
from Xlib.ext import xinput, xtest

__all__ = [
    "BROKER_MASTER_NAME",
    "InjectorUnavailable",
    "PlainXTestInjector",
    "UnknownKey",
    "XMasterInjector",
]

BROKER_MASTER_NAME = "kronii-broker"
VIRTUAL_CORE_POINTER = "Virtual core pointer"
VIRTUAL_CORE_KEYBOARD = "Virtual core keyboard"
# A raw event reaches the watcher a little after the injection's sync returned.
ATTRIBUTION_GRACE_S = 0.1
_KEPT_WINDOWS = 256
_REBIND_PAUSE_S = 0.05

_MODIFIER_ALIASES = {
    "ctrl": "Control_L",
    "control": "Control_L",
    "alt": "Alt_L",
    "shift": "Shift_L",
    "super": "Super_L",
    "win": "Super_L",
    "meta": "Meta_L",
    "enter": "Return",
    "esc": "Escape",
    "del": "Delete",
}
_CHARACTER_KEYSYMS = {"\n": XK.XK_Return, "\t": XK.XK_Tab}
_SCROLL_BUTTONS = {(0, -1): 4, (0, 1): 5, (-1, 0): 6, (1, 0): 7}


class InjectorUnavailable(RuntimeError):
    """The X server cannot host the injector (no XInput 2.2 or XTEST, or the master was not created)."""


class UnknownKey(ValueError):
    """A key chord names a keysym X does not know."""


class _Stopped(Exception):
    """still_valid() said no: the action ends here."""


def keysym_for_name(name: str) -> int:
    keysym = int(XK.string_to_keysym(_MODIFIER_ALIASES.get(name.lower(), name)))
    if keysym == X.NoSymbol:
        raise UnknownKey(f"unknown key {name!r}")
    return keysym


def keysym_for_character(character: str) -> int:
    """Latin-1 characters have keysyms equal to their code point; the rest use the Unicode keysym range."""
    if character in _CHARACTER_KEYSYMS:
        return int(_CHARACTER_KEYSYMS[character])
    point = ord(character)
    if 0x20 <= point <= 0x7E or 0xA0 <= point <= 0xFF:
        return point
    return 0x01000000 + point


class _Keymap:
    """Which keycode (and whether Shift) gives a keysym, as clients read the core keyboard map, plus the
    spare keycodes (ones no key sends) that missing keysyms get bound to, in turn, until stop."""

    def __init__(self, reader: Any, writers: Iterable[Any]) -> None:
        self._reader = reader
        self._writers = list(writers)
        self._bound: dict[int, int] = {}
        self._originals: dict[int, tuple[int, ...]] = {}
        self._next_spare = 0
        low, rows = self._rows()
        self._spares = [low + offset for offset, row in enumerate(rows) if not any(row)]
        self._width = len(rows[0]) if rows else 2
        self._index(low, rows)

    def _rows(self) -> tuple[int, list[tuple[int, ...]]]:
        low, high = self._reader.display.info.min_keycode, self._reader.display.info.max_keycode
        return low, [tuple(row) for row in self._reader.get_keyboard_mapping(low, high - low + 1)]

    def _index(self, low: int, rows: list[tuple[int, ...]]) -> None:
        self._lookup: dict[int, tuple[int, bool]] = {}
        for level in (0, 1):  # a keysym some key gives without Shift is typed without Shift
            for offset, row in enumerate(rows):
                keysym = row[level] if len(row) > level else X.NoSymbol
                if keysym and keysym not in self._lookup:
                    self._lookup[keysym] = (low + offset, level == 1)

    def reload(self) -> None:
        self._index(*self._rows())

    def find(self, keysym: int) -> tuple[int, bool]:
        """(keycode, needs Shift); binds a spare keycode when the map has no such keysym."""
        found = self._lookup.get(keysym)
        if found is not None:
            return found
        if not self._spares:
            raise UnknownKey(f"no keycode for keysym {keysym:#x} and no spare keycode to bind it to")
        keycode = self._spares[self._next_spare % len(self._spares)]
        self._next_spare += 1
        previous = self._bound.pop(keycode, None)
        if previous is not None:
            # Clients look a keycode up when they read the event, so one still in flight would read the new
            # keysym: give them a moment before a binding is reused.
            time.sleep(_REBIND_PAUSE_S)
            self._lookup.pop(previous, None)
        self._originals.setdefault(keycode, (X.NoSymbol,) * self._width)
        self._write(keycode, (keysym,) * self._width)
        self._bound[keycode] = keysym
        self._lookup[keysym] = (keycode, False)
        return keycode, False

    def unbind_all(self) -> None:
        """Only at stop: clients resolve keycodes lazily (Xlib refetches the map when it next looks a key
        up), so unbinding right after typing would turn characters still in flight into nothing."""
        for keycode, original in self._originals.items():
            self._write(keycode, original)
            self._lookup.pop(self._bound.pop(keycode, 0), None)
        self._originals.clear()

    def _write(self, keycode: int, row: tuple[int, ...]) -> None:
        # Synced before the key is sent: clients get the MappingNotify ahead of the key event.
        for writer in self._writers:
            writer.change_keyboard_mapping(keycode, [row])
            writer.sync()


class _Sender:
    """XTEST events on one connection, each one asked for by still_valid() first; remembers what is
    held down so an interrupted action can let go of it."""

    def __init__(self, display: Any, still_valid: Callable[[], bool]) -> None:
        self._display = display
        self._still_valid = still_valid
        self._held: list[tuple[int, int]] = []

    def _check(self) -> None:
        if not self._still_valid():
            raise _Stopped

    def press(self, event_type: int, detail: int) -> None:
        self._check()
        xtest.fake_input(self._display, event_type, detail)
        self._held.append((event_type + 1, detail))

    def release(self, event_type: int, detail: int) -> None:
        self._check()
        xtest.fake_input(self._display, event_type, detail)
        self._held.remove((event_type, detail))

    def move(self, x: int, y: int) -> None:
        self._check()
        root = self._display.screen().root.id
        xtest.fake_input(self._display, X.MotionNotify, 0, root=root, x=x, y=y)

    def let_go(self) -> None:
        """Releases are sent after a stop on purpose: a key left down would repeat forever."""
        for event_type, detail in reversed(self._held):
            xtest.fake_input(self._display, event_type, detail)
        self._held.clear()


class _Performer:
    """Turns an InputAction into XTEST events on `display`, keysyms resolved through `keymap`."""

    def __init__(self, display: Any, keymap: _Keymap) -> None:
        self._display = display
        self.keymap = keymap

    def perform(self, action: InputAction, sender: _Sender) -> None:
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

    def _chord(self, chord: str, sender: _Sender) -> None:
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

    def _type(self, text: str, sender: _Sender) -> None:
        shift = self.keymap.find(XK.XK_Shift_L)[0]
        for character in text:
            if not character.isprintable() and character not in _CHARACTER_KEYSYMS:
                continue
            keycode, needs_shift = self.keymap.find(keysym_for_character(character))
            if needs_shift:
                sender.press(X.KeyPress, shift)
            sender.press(X.KeyPress, keycode)
            sender.release(X.KeyRelease, keycode)
            if needs_shift:
                sender.release(X.KeyRelease, shift)

    @staticmethod
    def _button(button: int, times: int, sender: _Sender) -> None:
        for _ in range(times):
            sender.press(X.ButtonPress, button)
            sender.release(X.ButtonRelease, button)

    def _scroll(self, dx: int, dy: int, sender: _Sender) -> None:
        if dy:
            self._button(_SCROLL_BUTTONS[(0, 1 if dy > 0 else -1)], abs(dy), sender)
        if dx:
            self._button(_SCROLL_BUTTONS[(1 if dx > 0 else -1, 0)], abs(dx), sender)


def _require_extensions(display: Any) -> None:
    for name in (xinput.extname, xtest.extname):
        if not display.has_extension(name):
            raise InjectorUnavailable(f"the X server has no {name} extension")
    major, minor = x_protocol.query_version(display)
    if (major, minor) < (2, 2):
        raise InjectorUnavailable(f"the X server speaks XInput {major}.{minor}; the broker needs 2.2")


def _drain_mapping_changes(display: Any) -> bool:
    """Empties the event queue (the injector selects nothing, but MappingNotify goes to every client)."""
    changed = False
    while display.pending_events():
        if display.next_event().type == X.MappingNotify:
            changed = True
    return changed


def _devices(display: Any) -> dict[str, Any]:
    return {device.name: device for device in display.xinput_query_device(xinput.AllDevices).devices}


def _run(action: InputAction, performer: _Performer, sender: _Sender, display: Any) -> bool:
    try:
        performer.perform(action, sender)
    except _Stopped:
        sender.let_go()
        return False
    finally:
        display.sync()
    return True


class XMasterInjector:
    """Agent input through the broker's own XInput2 master device (see the module docstring)."""

    def __init__(self, display_name: str, name: str = BROKER_MASTER_NAME) -> None:
        self._display_name = display_name
        self._name = name
        self._lock = threading.Lock()
        self._display: Any = None
        self._core: Any = None
        self._performer: _Performer | None = None
        self._pointer = self._keyboard = 0
        self._core_pointer = self._core_keyboard = 0
        self._sources: frozenset[int] = frozenset()

    @property
    def master_pointer_id(self) -> int:
        return self._pointer

    @property
    def master_keyboard_id(self) -> int:
        return self._keyboard

    @property
    def source_ids(self) -> frozenset[int]:
        """The broker's XTEST slaves: raw events from these are the agent's own."""
        return self._sources

    def is_own(self, source_id: int, source_name: str, at: float) -> bool:
        return source_id in self._sources

    def start(self) -> None:
        with self._lock:
            display = xdisplay.Display(self._display_name)
            try:
                self._create_master(display)
            except BaseException:
                display.close()
                raise
            self._display = display
            # Clients read keysyms from the core keyboard's map, so that is the one to look keys up in;
            # a spare keycode is bound in both maps so the server's view matches the clients'.
            self._core = xdisplay.Display(self._display_name)
            self._performer = _Performer(display, _Keymap(self._core, (self._core, display)))

    def _create_master(self, display: Any) -> None:
        _require_extensions(display)
        devices = _devices(display)
        self._core_pointer = devices[VIRTUAL_CORE_POINTER].deviceid
        self._core_keyboard = devices[VIRTUAL_CORE_KEYBOARD].deviceid
        stale = devices.get(f"{self._name} pointer")
        if stale is not None:
            self._remove(display, stale.deviceid)
        catcher = xerror.CatchError()
        x_protocol.add_master(display, self._name, onerror=catcher)
        display.sync()
        devices = _devices(display)
        try:
            self._pointer = devices[f"{self._name} pointer"].deviceid
            self._keyboard = devices[f"{self._name} keyboard"].deviceid
            slaves = (devices[f"{self._name} XTEST pointer"], devices[f"{self._name} XTEST keyboard"])
        except KeyError as missing:
            raise InjectorUnavailable(f"creating master {self._name!r} failed: {catcher.get_error()}") from (
                missing
            )
        self._sources = frozenset(slave.deviceid for slave in slaves)
        x_protocol.set_client_pointer(display, self._pointer)
        display.sync()

    def _remove(self, display: Any, pointer_id: int) -> None:
        x_protocol.remove_master(display, pointer_id, self._core_pointer, self._core_keyboard)
        display.sync()

    def inject(self, action: InputAction, window: int, still_valid: Callable[[], bool]) -> bool:
        """Performs the action; False (and nothing sent after that) as soon as still_valid() says no."""
        with self._lock:
            if self._performer is None:
                raise InjectorUnavailable("the injector is not started")
            if _drain_mapping_changes(self._core) | _drain_mapping_changes(self._display):
                self._performer.keymap.reload()
            if not still_valid():
                return False
            if action.kind in ("key", "type"):
                focus = window or x_protocol.get_focus(self._display, self._core_keyboard)
                x_protocol.set_focus(self._display, self._keyboard, focus)
            return _run(action, self._performer, _Sender(self._display, still_valid), self._display)

    def stop(self) -> None:
        """Removes the master (physical slaves, if any were moved to it, go back to the core devices)."""
        with self._lock:
            if self._display is None:
                return
            try:
                if self._performer is not None:
                    self._performer.keymap.unbind_all()
                self._remove(self._display, self._pointer)
            finally:
                self._display.close()
                self._core.close()
                self._display = self._core = self._performer = None
                self._sources = frozenset()


class PlainXTestInjector:
    """Fallback: XTEST on the core devices, attributed by time (see the module docstring)."""

    def __init__(self, display_name: str) -> None:
        self._display_name = display_name
        self._lock = threading.Lock()
        self._windows_lock = threading.Lock()
        self._display: Any = None
        self._performer: _Performer | None = None
        self._windows: deque[tuple[float, float]] = deque(maxlen=_KEPT_WINDOWS)
        self._open_since: float | None = None

    @property
    def source_ids(self) -> frozenset[int]:
        """Empty: the core XTEST devices are shared with every other XTEST client."""
        return frozenset()

    def injection_windows(self) -> list[tuple[float, float]]:
        """Monotonic (start, end) of recent injections; an injection under way ends at infinity."""
        with self._windows_lock:
            windows = list(self._windows)
            if self._open_since is not None:
                windows.append((self._open_since, float("inf")))
        return windows

    def is_own(self, source_id: int, source_name: str, at: float) -> bool:
        if "XTEST" not in source_name:
            return False
        return any(start <= at <= end + ATTRIBUTION_GRACE_S for start, end in self.injection_windows())

    def start(self) -> None:
        with self._lock:
            display = xdisplay.Display(self._display_name)
            if not display.has_extension(xtest.extname):
                display.close()
                raise InjectorUnavailable("the X server has no XTEST extension")
            self._display = display
            self._performer = _Performer(display, _Keymap(display, (display,)))

    def inject(self, action: InputAction, window: int, still_valid: Callable[[], bool]) -> bool:
        with self._lock:
            if self._performer is None:
                raise InjectorUnavailable("the injector is not started")
            if _drain_mapping_changes(self._display):
                self._performer.keymap.reload()
            if not still_valid():
                return False
            with self._windows_lock:
                self._open_since = time.monotonic()
            try:
                if window and action.kind in ("key", "type"):
                    self._display.set_input_focus(window, X.RevertToParent, X.CurrentTime)
                return _run(action, self._performer, _Sender(self._display, still_valid), self._display)
            finally:
                with self._windows_lock:
                    if self._open_since is not None:
                        self._windows.append((self._open_since, time.monotonic()))
                    self._open_since = None

    def stop(self) -> None:
        with self._lock:
            if self._display is not None:
                try:
                    if self._performer is not None:
                        self._performer.keymap.unbind_all()
                finally:
                    self._display.close()
                    self._display = self._performer = None
