"""Typing and clicking on a wlroots compositor (sway first): the virtual keyboard
(`zwp_virtual_keyboard_v1`) and virtual pointer (`zwlr_virtual_pointer_v1`) protocols, on a seat of their own.

The broker puts the agent's input on a seat other than the person's (sway: `seat kronii-agent fallback
false`), so the compositor's per-seat idle notifications tell the person's input from the agent's.

Text is typed the way wtype does it: the keyboard uploads a keymap of its own, so any Unicode
character types without depending on the person's layout. Each keymap is a US keyboard at the usual
keycodes (letters with their capitals on the Shift level, so "shift+a" gives "A"; Return, arrows, F
keys, the modifier keys) plus, on the free keycodes in 9..255, every other keysym the text needs (one
level each). When a character's keysym is not in the current keymap, a new one is uploaded with it and
the ones the text needs next. Keysyms are written as numbers; the compositor hands clients its own
serialisation.

Modifiers go through the protocol's `modifiers` request (wlroots does not derive them from a virtual
keyboard's key events): Shift 1, Control 4, Mod1 (Alt) 8, Mod4 (Super) 64, held around the chord's keys.

Every method blocks; one thread at a time (the caller serialises). Errors are WaylandError with a
sentence; bad arguments (an unknown key name, a control character, a button other than 1..3) ValueError.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kronii.desktop.wayland_wire import WaylandConnection, WaylandError

__all__ = [
    "BUTTON_CODES",
    "KEYBOARD_PROTOCOL",
    "POINTER_PROTOCOL",
    "VirtualKeyboard",
    "VirtualPointer",
    "keysym_for_character",
    "layout_box",
    "layout_size",
    "parse_chord",
    "seat_named",
]

KEYBOARD_PROTOCOL = "zwp_virtual_keyboard_manager_v1"
POINTER_PROTOCOL = "zwlr_virtual_pointer_manager_v1"

Check = Callable[[], bool]

# ---- keysyms ---------------------------------------------------------------------------------------

_SHIFT, _CONTROL, _MOD1, _MOD4 = 1, 4, 8, 64
# The modifier keys every keymap carries at their usual keycodes, so clients resolve Alt and Super to
# Mod1 and Mod4: (keysym, real modifier, xkb keycode).
_MODIFIER_KEYS = ((0xFFE1, "Shift", 50), (0xFFE3, "Control", 37), (0xFFE9, "Mod1", 64), (0xFFEB, "Mod4", 133))
_MODIFIER_MASKS = {
    0xFFE1: _SHIFT, 0xFFE2: _SHIFT, 0xFFE3: _CONTROL, 0xFFE4: _CONTROL, 0xFFE7: _MOD1, 0xFFE8: _MOD1,
    0xFFE9: _MOD1, 0xFFEA: _MOD1, 0xFFEB: _MOD4, 0xFFEC: _MOD4,
}  # fmt: skip
# The same short names the X11 broker accepts (kronii.broker.adapters.x_keymap).
_ALIASES = {
    "ctrl": "Control_L", "control": "Control_L", "alt": "Alt_L", "shift": "Shift_L", "super": "Super_L",
    "win": "Super_L", "meta": "Meta_L", "enter": "Return", "esc": "Escape", "del": "Delete",
}  # fmt: skip
_CHARACTER_KEYSYMS = {"\n": 0xFF0D, "\t": 0xFF09}  # Return, Tab
_UNICODE_KEYSYM = 0x01000000  # xkbcommon's keysym for code point P outside Latin-1: this + P


def keysym_for_character(character: str) -> int:
    """Latin-1 characters have keysyms equal to their code point; the rest are xkbcommon's "Uxxxx"."""
    if character in _CHARACTER_KEYSYMS:
        return _CHARACTER_KEYSYMS[character]
    point = ord(character)
    if 0x20 <= point <= 0x7E or 0xA0 <= point <= 0xFF:
        return point
    if point < 0x20 or 0x7F <= point < 0xA0 or 0xD800 <= point <= 0xDFFF:
        raise ValueError(f"cannot type the control character U+{point:04X}; only newline and tab are keys")
    return _UNICODE_KEYSYM + point


@functools.cache
def _keysym_from_name() -> Callable[[bytes, int], int]:
    # Key names are X's keysym names; libxkbcommon is their authority on Wayland and every Wayland
    # desktop has it (the compositor and every toolkit link it). Only chords need it, not text.
    try:
        library = ctypes.CDLL("libxkbcommon.so.0")
    except OSError as error:
        raise WaylandError(
            f"key chords on Wayland need libxkbcommon, which is not installed: {error}"
        ) from error
    function = library.xkb_keysym_from_name
    function.argtypes = [ctypes.c_char_p, ctypes.c_int]
    function.restype = ctypes.c_uint32
    return function


def keysym_for_name(name: str) -> int:
    keysym = int(_keysym_from_name()(_ALIASES.get(name.lower(), name).encode(), 0))
    if keysym == 0:
        raise ValueError(
            f'unknown key "{name}": use X keysym names such as ctrl, shift, alt, super, Return, F4'
        )
    return keysym


def parse_chord(keys: str) -> tuple[int, list[int]]:
    """A chord such as "ctrl+shift+t": the modifier mask it holds and the keysyms it presses, in order.
    A chord of modifiers only ("shift") presses its last one as a key."""
    names = keys.split("+")
    if not keys or any(not name for name in names):
        raise ValueError(f'"{keys}" is not a key chord: key names joined by "+", such as ctrl+s')
    keysyms = [keysym_for_name(name) for name in names]
    mask = 0
    for keysym in keysyms:
        mask |= _MODIFIER_MASKS.get(keysym, 0)
    pressed = [keysym for keysym in keysyms if keysym not in _MODIFIER_MASKS]
    return mask, pressed or keysyms[-1:]


# ---- the keymap ------------------------------------------------------------------------------------

# Every keymap starts with a US keyboard at the usual (evdev) keycodes. GTK3 matches its key bindings
# (Return in an entry, ctrl+a) by keycode through the keymap of the display's FIRST seat, the person's,
# not the agent's: keys at the keycodes every layout puts them at still match there. Keysyms the base
# lacks (é, €, 漢) take the free keycodes; clients type those through the keysym the event carries.
_NAMED_KEYS = {
    9: 0xFF1B, 22: 0xFF08, 23: 0xFF09, 36: 0xFF0D, 65: 0x20, 95: 0xFFC8, 96: 0xFFC9, 107: 0xFF61,
    110: 0xFF50, 111: 0xFF52, 112: 0xFF55, 113: 0xFF51, 114: 0xFF53, 115: 0xFF57, 116: 0xFF54,
    117: 0xFF56, 118: 0xFF63, 119: 0xFFFF, 127: 0xFF13, 135: 0xFF67,
}  # fmt: skip  # Escape, BackSpace, Tab, Return, space, F11, F12, Print, Home, Up, Prior, Left, Right,
# End, Down, Next, Insert, Delete, Pause, Menu
_US_ROWS: tuple[tuple[int, str], ...] = ((10, "1!2@3#4$5%6^7&8*9(0)-_=+"), (24, "qQwWeErRtTyYuUiIoOpP[{]}"))
_US_ROWS += ((38, "aAsSdDfFgGhHjJkKlL;:'\"`~"), (51, "\\|zZxXcCvVbBnNmM,<.>/?"))


def _base_layout() -> dict[int, tuple[int, ...]]:
    """xkb keycode -> the keysyms on its levels (the second one with Shift)."""
    base: dict[int, tuple[int, ...]] = {code: (keysym,) for code, keysym in _NAMED_KEYS.items()}
    base.update({67 + index: (0xFFBE + index,) for index in range(10)})  # F1..F10
    base.update({code: (keysym,) for keysym, _real, code in _MODIFIER_KEYS})
    for first, pairs in _US_ROWS:
        base.update(
            {
                first + index: (ord(pairs[2 * index]), ord(pairs[2 * index + 1]))
                for index in range(len(pairs) // 2)
            }
        )
    return base


_BASE_LAYOUT = _base_layout()
_FREE_KEYCODES = [code for code in range(9, 256) if code not in _BASE_LAYOUT]  # the evdev code is code - 8
KEYMAP_CAPACITY = len(_FREE_KEYCODES)  # distinct keysyms beyond the base one keymap holds


@dataclass
class _Keymap:
    """The keymap the keyboard uploaded last: the base layout plus keysyms on free keycodes."""

    levels: dict[int, tuple[int, ...]] = field(
        default_factory=lambda: dict(_BASE_LAYOUT)
    )  # keycode -> keysyms
    keycodes: dict[int, int] = field(default_factory=dict)  # keysym -> the keycode giving it without Shift

    def __post_init__(self) -> None:
        self.keycodes = {keysyms[0]: code for code, keysyms in self.levels.items()}

    @staticmethod
    def for_keysyms(upcoming: Sequence[int]) -> _Keymap:
        """The base layout plus the first KEYMAP_CAPACITY distinct keysyms of `upcoming` it lacks."""
        keymap = _Keymap()
        free = iter(_FREE_KEYCODES)
        for keysym in upcoming:
            if keysym in keymap.keycodes:
                continue
            code = next(free, None)
            if code is None:
                break
            keymap.levels[code] = (keysym,)
            keymap.keycodes[keysym] = code
        return keymap

    def text(self) -> str:
        codes = "".join(f"<K{code:03d}> = {code}; " for code in self.levels)
        symbols = "".join(
            f"key <K{code:03d}> {{ [ {', '.join(f'0x{sym:x}' for sym in syms)} ] }}; "
            for code, syms in self.levels.items()
        )
        modifiers = "".join(
            f"modifier_map {real} {{ <K{code:03d}> }}; " for _sym, real, code in _MODIFIER_KEYS
        )
        return (
            f'xkb_keymap {{ xkb_keycodes "kronii" {{ minimum = 8; maximum = 255; {codes}}};\n'
            'xkb_types "kronii" { include "complete" }; xkb_compat "kronii" { include "complete" };\n'
            f'xkb_symbols "kronii" {{ {symbols}{modifiers}}}; }};\n'
        )


def _now_ms() -> int:
    return int(time.monotonic() * 1000) & 0xFFFFFFFF


# ---- seats and the layout --------------------------------------------------------------------------


def seat_named(connection: WaylandConnection, name: str) -> int | None:
    """The object id of the wl_seat called `name`, bound on `connection`; None when no seat has that
    name. The other seats are released again where the compositor allows it (wl_seat version 5)."""
    names: dict[int, str] = {}

    def on_seat(object_id: int, opcode: int, args: list[object]) -> None:
        if opcode == 1:
            names[object_id] = str(args[0])

    bound: dict[int, int] = {}  # object id -> version
    for offered in [item for item in connection.globals.values() if item.interface == "wl_seat"]:
        if offered.version < 2:
            continue  # seats older than version 2 announce no name
        version = min(offered.version, 5)
        seat = connection.new_object("wl_seat", on_seat)
        connection.request(2, 0, offered.name, "wl_seat", version, seat)
        bound[seat] = version
    connection.roundtrip()
    found = next((seat for seat, seat_name in names.items() if seat_name == name), None)
    for seat, version in bound.items():
        if seat != found and version >= 5:
            connection.request(seat, 3)
            connection.forget(seat)
    return found


@dataclass
class _OutputBox:
    """What wl_output (position, current mode, scale) and zxdg_output_v1 (logical box) said of an output."""

    x: int = 0
    y: int = 0
    mode: tuple[int, int] = (0, 0)
    scale: int = 1
    logical: list[int] = field(default_factory=list)  # zxdg_output_v1: x, y, then width, height

    def rect(self) -> tuple[int, int, int, int]:
        if len(self.logical) == 4:
            x, y, width, height = self.logical
            return x, y, x + width, y + height
        return self.x, self.y, self.x + self.mode[0] // self.scale, self.y + self.mode[1] // self.scale

    def on_output(self, _object_id: int, opcode: int, args: list[object]) -> None:
        values = [value for value in args if isinstance(value, int)]
        if opcode == 0:  # geometry
            self.x, self.y = values[0], values[1]
        elif opcode == 1 and values[0] & 1:  # the current mode
            self.mode = (values[1], values[2])
        elif opcode == 3:
            self.scale = max(1, values[0])

    def on_logical(self, _object_id: int, opcode: int, args: list[object]) -> None:
        if opcode in (0, 1):  # logical_position, then logical_size
            self.logical += [value for value in args if isinstance(value, int)]


def layout_size(connection: WaylandConnection) -> tuple[int, int]:
    """Width and height of the output layout's bounding box: the extent for absolute pointer motion."""
    return layout_box(connection)[2:]


def layout_box(connection: WaylandConnection) -> tuple[int, int, int, int]:
    """The bounding box (x, y, width, height) of every output, in logical pixels (zxdg_output_v1 where
    offered, else wl_output's position and current mode over its scale). Absolute pointer motion is
    relative to its top left corner, which is not always 0,0 (sway may place the first output right
    of another)."""
    xdg = connection.bind("zxdg_output_manager_v1", 3)
    boxes: list[_OutputBox] = []
    releases: list[int] = []  # objects whose opcode 0 releases them, once read
    for offered in [item for item in connection.globals.values() if item.interface == "wl_output"]:
        boxes.append(box := _OutputBox())
        output = connection.new_object("wl_output", box.on_output)
        connection.request(2, 0, offered.name, "wl_output", min(offered.version, 3), output)
        if xdg is not None:
            releases.append(logical := connection.new_object("zxdg_output_v1", box.on_logical))
            connection.request(xdg, 1, logical, output)
        if offered.version >= 3:
            releases.append(output)
    connection.roundtrip()
    for object_id in [*releases, *([xdg] if xdg is not None else [])]:
        connection.request(object_id, 0)
        connection.forget(object_id)
    rects = [box.rect() for box in boxes]
    if not rects:
        raise WaylandError("the compositor reports no output, so there is no layout to point into")
    left, top = min(rect[0] for rect in rects), min(rect[1] for rect in rects)
    return left, top, max(rect[2] for rect in rects) - left, max(rect[3] for rect in rects) - top


# ---- the keyboard ----------------------------------------------------------------------------------


# Between characters. Measured with zenity's GTK3 entry on sway: 0 ms loses the client after about
# 100 characters, 1 ms types 1,000 exactly; 4 ms leaves room for a loaded machine (250 a second).
KEY_INTERVAL_S = 0.004


class VirtualKeyboard:
    """A virtual keyboard on `seat` (a wl_seat object id on `connection`, see seat_named)."""

    def __init__(
        self, connection: WaylandConnection, seat: int, *, key_interval_s: float = KEY_INTERVAL_S
    ) -> None:
        manager = connection.bind(KEYBOARD_PROTOCOL, 1)
        if manager is None:
            raise WaylandError(f"the compositor offers no virtual keyboard ({KEYBOARD_PROTOCOL})")
        self._wire = connection
        self._keyboard = connection.new_object("zwp_virtual_keyboard_v1")
        connection.request(manager, 0, seat, self._keyboard)
        self._keymap = _Keymap()
        self._interval_s = key_interval_s
        self._next_key_at = 0.0
        self._upload(_Keymap.for_keysyms(()))  # the compositor refuses keys before a keymap
        connection.roundtrip()

    def type_text(self, text: str, check: Check) -> bool:
        """Type `text`, calling `check()` before every key press and release; False (nothing held) as
        soon as it says no, True when every character was typed."""
        keysyms = [keysym_for_character(character) for character in text]
        held: list[int] = []
        try:
            for index, keysym in enumerate(keysyms):
                keycode = self._keycode(keysym, keysyms[index:])
                if not self._press(keycode, held, check) or not self._release(keycode, held, check):
                    return False
                self._pace()
            return True
        finally:
            self._let_go(held, 0)

    def chord(self, keys: str, check: Check) -> bool:
        """Press a chord such as "ctrl+shift+t", "alt+F4", "Return": its modifiers held through the
        `modifiers` request, its keys pressed in order and released in reverse; `check()` before every
        key event; False (nothing held) as soon as it says no."""
        mask, keysyms = parse_chord(keys)
        keycodes = [self._keycode(keysym, keysyms) for keysym in keysyms]
        held: list[int] = []
        try:
            if not check():
                return False
            self._modifiers(mask)
            for keycode in keycodes:
                if not self._press(keycode, held, check):
                    return False
            for keycode in reversed(keycodes):
                if not self._release(keycode, held, check):
                    return False
            self._modifiers(0)
            self._pace()
            return True
        finally:
            self._let_go(held, mask)

    def close(self) -> None:
        with contextlib.suppress(WaylandError):
            self._wire.request(self._keyboard, 3)
            self._wire.forget(self._keyboard)

    # ---- internals -----------------------------------------------------------------------------

    def _keycode(self, keysym: int, upcoming: Sequence[int]) -> int:
        if keysym not in self._keymap.keycodes:
            self._upload(_Keymap.for_keysyms([keysym, *upcoming]))
        return self._keymap.keycodes[keysym]

    def _upload(self, keymap: _Keymap) -> None:
        data = keymap.text().encode() + b"\0"
        try:
            fd = os.memfd_create("kronii-keymap", os.MFD_CLOEXEC)
        except OSError as error:
            raise WaylandError(f"cannot make the keymap's shared memory: {error.strerror}") from error
        try:
            os.write(fd, data)
            self._wire.request(self._keyboard, 0, 1, fd, len(data))  # format 1: xkb_v1
        finally:
            os.close(fd)  # the compositor has its own copy of the descriptor once it is sent
        self._keymap = keymap

    def _press(self, keycode: int, held: list[int], check: Check) -> bool:
        if not check():
            return False
        self._wire.request(self._keyboard, 1, _now_ms(), keycode - 8, 1)
        held.append(keycode)
        return True

    def _release(self, keycode: int, held: list[int], check: Check) -> bool:
        if not check():
            return False
        self._wire.request(self._keyboard, 1, _now_ms(), keycode - 8, 0)
        held.remove(keycode)
        return True

    def _pace(self) -> None:
        """Wait until the compositor has handled the keys, then until the next key's time. The
        compositor queues the focused client's events in a fixed buffer (4 KiB with libwayland 1.21)
        and disconnects a client that falls that far behind: a GTK entry does at full speed."""
        self._wire.roundtrip()
        now = time.monotonic()
        if self._next_key_at > now:
            time.sleep(self._next_key_at - now)
        self._next_key_at = max(now, self._next_key_at) + self._interval_s

    def _modifiers(self, mask: int) -> None:
        self._wire.request(self._keyboard, 2, mask, 0, 0, 0)

    def _let_go(self, held: list[int], mask: int) -> None:
        """Release whatever a stop or an error left held; a broken connection holds nothing (the
        compositor drops the keyboard with it)."""
        if not held and not mask:
            return
        with contextlib.suppress(WaylandError):
            for keycode in reversed(held):
                self._wire.request(self._keyboard, 1, _now_ms(), keycode - 8, 0)
            held.clear()
            self._modifiers(0)
            self._wire.roundtrip()


# ---- the pointer -----------------------------------------------------------------------------------

BUTTON_CODES = {1: 0x110, 2: 0x112, 3: 0x111}  # evdev BTN_LEFT, BTN_MIDDLE, BTN_RIGHT
_NOTCH = 15.0  # what libinput reports for one wheel detent
_WHEEL = 0  # axis_source wheel
_VERTICAL, _HORIZONTAL = 0, 1


class VirtualPointer:
    """A virtual pointer on `seat` (a wl_seat object id on `connection`, see seat_named). Positions are
    from the layout's bounding box's top left corner (layout_box; 0,0 unless an output sits left of
    or above 0,0), against the box's size (layout_size) as the extent."""

    def __init__(self, connection: WaylandConnection, seat: int) -> None:
        manager = connection.bind(POINTER_PROTOCOL, 2)
        if manager is None:
            raise WaylandError(f"the compositor offers no virtual pointer ({POINTER_PROTOCOL})")
        if connection.version_of(POINTER_PROTOCOL) < 2:
            raise WaylandError(f"the compositor's {POINTER_PROTOCOL} is version 1; scrolling needs 2")
        self._wire = connection
        self._pointer = connection.new_object("zwlr_virtual_pointer_v1")
        connection.request(manager, 0, seat, self._pointer)
        connection.roundtrip()

    def move(self, x: int, y: int, extent_w: int, extent_h: int) -> None:
        self._motion(x, y, extent_w, extent_h)
        self._wire.roundtrip()

    def click(self, x: int, y: int, button: int, extent_w: int, extent_h: int, check: Check) -> bool:
        """Move to (x, y), press and release `button` (1 left, 2 middle, 3 right); `check()` before the
        move, the press and the release. False as soon as it says no (a pressed button is released)."""
        code = BUTTON_CODES.get(button)
        if code is None:
            raise ValueError(f"button must be 1 (left), 2 (middle) or 3 (right), not {button}")
        if not check():
            return False
        self._motion(x, y, extent_w, extent_h)
        if not check():
            return False
        self._button(code, 1)
        allowed = check()
        self._button(code, 0)  # released either way: a stop never leaves a button held
        self._wire.roundtrip()
        return allowed

    def scroll(self, dx: int, dy: int, check: Check) -> bool:
        """Scroll `dy` notches down (negative: up) then `dx` right (negative: left), as a wheel does;
        `check()` before every notch; False as soon as it says no."""
        vertical = [(_VERTICAL, 1 if dy > 0 else -1)] * abs(dy)
        horizontal = [(_HORIZONTAL, 1 if dx > 0 else -1)] * abs(dx)
        for axis, step in vertical + horizontal:
            if not check():
                self._wire.roundtrip()
                return False
            self._wire.request(self._pointer, 5, _WHEEL)
            self._wire.request(self._pointer, 7, _now_ms(), axis, _NOTCH * step, step)
            self._wire.request(self._pointer, 4)
        self._wire.roundtrip()
        return True

    def close(self) -> None:
        with contextlib.suppress(WaylandError):
            self._wire.request(self._pointer, 8)
            self._wire.forget(self._pointer)

    def _motion(self, x: int, y: int, extent_w: int, extent_h: int) -> None:
        if extent_w <= 0 or extent_h <= 0 or not (0 <= x <= extent_w and 0 <= y <= extent_h):
            raise ValueError(f"the point {x},{y} is outside the layout of {extent_w}x{extent_h}")
        self._wire.request(self._pointer, 1, _now_ms(), x, y, extent_w, extent_h)
        self._wire.request(self._pointer, 4)

    def _button(self, code: int, state: int) -> None:
        self._wire.request(self._pointer, 2, _now_ms(), code, state)
        self._wire.request(self._pointer, 4)
