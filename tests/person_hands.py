"""A person's keyboard and mouse on a test's Xvfb: a device of its own, as the person's hands are.

The broker counts as the person the physical input devices and the attached VNC viewer (x11vnc
-multiptr gives each viewer its own XInput2 master); anything arriving on the core XTEST device, what
`xdotool` and every other plain XTEST client use, is automation that went around the broker. A test
that means "the person presses a key" therefore cannot use xdotool: `PersonHands` creates its own
master pair ("<name> pointer"/"<name> keyboard", with the server's "<name> XTEST ..." slaves), as
x11vnc does for a viewer, makes it this connection's ClientPointer, and types and clicks through
XTEST on it. Its keyboard follows the core keyboard's focus, so keys land where `xdotool` would
have put them.

    with PersonHands(display) as hands:
        hands.type("P")
        hands.key("ctrl+alt+Escape")
"""

from __future__ import annotations

import contextlib
from typing import Any

from kronii.broker.adapters import x_protocol
from Xlib import XK, X
from Xlib import display as xdisplay
from Xlib.ext import xinput, xtest

__all__ = ["PERSON_MASTER", "PersonHands"]

PERSON_MASTER = "test-person"
_MODIFIERS = {
    "ctrl": "Control_L",
    "control": "Control_L",
    "shift": "Shift_L",
    "alt": "Alt_L",
    "super": "Super_L",
}
# Characters whose keysym name is not the character itself.
_CHAR_NAMES = {" ": "space", "\n": "Return", "\t": "Tab"}


class PersonHands:
    """The person's own input device on ``display`` (see the module docstring)."""

    def __init__(self, display: str, name: str = PERSON_MASTER) -> None:
        self._name = name
        self._display: Any = xdisplay.Display(display)
        try:
            self._create()
        except BaseException:
            self._display.close()
            raise

    def _devices(self) -> dict[str, int]:
        devices = self._display.xinput_query_device(xinput.AllDevices).devices
        return {device.name: device.deviceid for device in devices}

    def _create(self) -> None:
        x_protocol.query_version(self._display)
        devices = self._devices()
        stale = devices.get(f"{self._name} pointer")
        if stale is not None:
            self._remove(stale)
        x_protocol.add_master(self._display, self._name)
        self._display.sync()
        devices = self._devices()
        self._pointer = devices[f"{self._name} pointer"]
        self._keyboard = devices[f"{self._name} keyboard"]
        self._core_pointer = devices["Virtual core pointer"]
        self._core_keyboard = devices["Virtual core keyboard"]
        x_protocol.set_client_pointer(self._display, self._pointer)
        self._display.sync()

    def _remove(self, pointer: int) -> None:
        devices = self._devices()
        x_protocol.remove_master(
            self._display, pointer, devices["Virtual core pointer"], devices["Virtual core keyboard"]
        )
        self._display.sync()

    @property
    def source_names(self) -> tuple[str, str]:
        """The slave devices its events come from, as the X server names them."""
        return (f"{self._name} XTEST keyboard", f"{self._name} XTEST pointer")

    def _keycode(self, name: str) -> tuple[int, bool]:
        """The keycode for a key name or a character, and whether Shift is needed for it."""
        keysym = XK.string_to_keysym(_MODIFIERS.get(name.lower(), _CHAR_NAMES.get(name, name)))
        if keysym == X.NoSymbol and len(name) == 1:
            keysym = ord(name)
        for code, index in self._display.keysym_to_keycodes(keysym):
            if index in (0, 1):
                return code, index == 1
        raise ValueError(f"no key on this keyboard produces {name!r}")

    def _follow_focus(self) -> None:
        focus = x_protocol.get_focus(self._display, self._core_keyboard)
        x_protocol.set_focus(self._display, self._keyboard, focus)

    def _press(self, codes: list[int]) -> None:
        for code in codes:
            xtest.fake_input(self._display, X.KeyPress, code)
        for code in reversed(codes):
            xtest.fake_input(self._display, X.KeyRelease, code)

    def key(self, *chords: str) -> None:
        """Press each chord ("a", "Return", "ctrl+alt+Escape") and let go, in order."""
        self._follow_focus()
        for chord in chords:
            *modifiers, last = chord.split("+")
            codes = [self._keycode(modifier)[0] for modifier in modifiers]
            code, shifted = self._keycode(last)
            if shifted:
                codes.append(self._keycode("shift")[0])
            self._press([*codes, code])
        self._display.sync()

    def type(self, text: str) -> None:
        """Type ``text`` one character at a time into the window the keyboard focus is on."""
        self._follow_focus()
        for char in text:
            code, shifted = self._keycode(char)
            self._press([self._keycode("shift")[0], code] if shifted else [code])
        self._display.sync()

    def move(self, dx: int, dy: int) -> None:
        """Move the person's pointer by (dx, dy)."""
        xtest.fake_input(self._display, X.MotionNotify, True, x=dx, y=dy)
        self._display.sync()

    def click(self, button: int = 1) -> None:
        xtest.fake_input(self._display, X.ButtonPress, button)
        xtest.fake_input(self._display, X.ButtonRelease, button)
        self._display.sync()

    def close(self) -> None:
        if self._display is None:
            return
        with contextlib.suppress(Exception):
            self._remove(self._pointer)
        self._display.close()
        self._display = None

    def __enter__(self) -> PersonHands:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
