"""Keys for the broker's XTEST injection: keysyms for key names and characters, and the keyboard map
they are typed through. Characters missing from the map are typed the way xdotool does: a spare
keycode (one no key sends) is bound to the keysym and pressed. Bindings stay until stop (clients look
keycodes up lazily, so an early unbind loses characters in flight); the spare keycodes are reused in
turn when a text needs more of them."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from Xlib import XK, X

__all__ = ["CHARACTER_KEYSYMS", "Keymap", "UnknownKey", "keysym_for_character", "keysym_for_name"]

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
CHARACTER_KEYSYMS = {"\n": XK.XK_Return, "\t": XK.XK_Tab}


class UnknownKey(ValueError):
    """A key chord names a keysym X does not know."""


def keysym_for_name(name: str) -> int:
    keysym = int(XK.string_to_keysym(_MODIFIER_ALIASES.get(name.lower(), name)))
    if keysym == X.NoSymbol:
        raise UnknownKey(f"unknown key {name!r}")
    return keysym


def keysym_for_character(character: str) -> int:
    """Latin-1 characters have keysyms equal to their code point; the rest use the Unicode keysym range."""
    if character in CHARACTER_KEYSYMS:
        return int(CHARACTER_KEYSYMS[character])
    point = ord(character)
    if 0x20 <= point <= 0x7E or 0xA0 <= point <= 0xFF:
        return point
    return 0x01000000 + point


class Keymap:
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

    def known(self, keysym: int) -> bool:
        """Whether find() answers without binding (without a request to the X server)."""
        return keysym in self._lookup

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
