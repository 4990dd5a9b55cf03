"""The X server's order of input events, as a client of its own reads it: XI2 raw key presses and
releases of every master on the root, each stamped with time.monotonic() as it is read. One
connection's events come in the order the server processed them, so the list is the server's order
whatever the rest of the process does; the stamps are when this process read them."""

from __future__ import annotations

import os
import select
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kronii.broker.adapters import x_protocol
from Xlib import XK
from Xlib import display as xdisplay
from Xlib.ext import ge, xinput, xtest

__all__ = ["KEY_PRESS", "KEY_RELEASE", "OrderListener", "XEvent", "core_xtest_key", "device_id"]

KEY_PRESS = "press"
KEY_RELEASE = "release"
_KINDS = {xinput.RawKeyPress: KEY_PRESS, xinput.RawKeyRelease: KEY_RELEASE}


@dataclass(frozen=True)
class XEvent:
    kind: str
    source: int  # the slave device that produced it
    detail: int  # the keycode
    at: float  # time.monotonic() when this process read it
    server_ms: int  # the X server's own time for it (milliseconds)


class OrderListener:
    """Every raw key press and release on a display, in the server's order (see the module docstring)."""

    def __init__(self, display_name: str) -> None:
        self._display: Any = xdisplay.Display(display_name)
        x_protocol.query_version(self._display)
        x_protocol.register_raw_events(self._display)
        root = self._display.screen().root
        root.xinput_select_events(
            [(xinput.AllMasterDevices, xinput.RawKeyPressMask | xinput.RawKeyReleaseMask)]
        )
        self._display.sync()
        self._events: list[XEvent] = []
        self._changed = threading.Condition()
        self._wake_read, self._wake_write = os.pipe()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            while self._display.pending_events():
                event = self._display.next_event()
                if event.type == ge.GenericEventCode and event.evtype in _KINDS:
                    data = event.data
                    seen = XEvent(
                        _KINDS[event.evtype], data.sourceid, data.detail, time.monotonic(), data.time
                    )
                    with self._changed:
                        self._events.append(seen)
                        self._changed.notify_all()
            readable, _, _ = select.select([self._display.fileno(), self._wake_read], [], [])
            if self._wake_read in readable:
                return

    def mark(self) -> int:
        """Where the list ends now."""
        with self._changed:
            return len(self._events)

    def wait_for(self, matches: Callable[[XEvent], bool], since: int, timeout_s: float) -> list[XEvent]:
        """The events from `since` up to the first that `matches` (excluded); TimeoutError after `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            checked = since
            while True:
                for index in range(checked, len(self._events)):
                    if matches(self._events[index]):
                        return self._events[since : index + 1]
                checked = len(self._events)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no matching X event within {timeout_s}s")
                self._changed.wait(left)

    def close(self) -> None:
        os.write(self._wake_write, b"x")
        self._thread.join(2)
        self._display.close()


def device_id(display_name: str, name: str) -> int:
    connection = xdisplay.Display(display_name)
    try:
        devices = connection.xinput_query_device(xinput.AllDevices).devices
        return next(int(device.deviceid) for device in devices if device.name == name)
    finally:
        connection.close()


def core_xtest_key(display_name: str, key: str) -> int:
    """Press and release `key` through the core XTEST device (as xdotool would, without its start-up);
    its keycode."""
    connection = xdisplay.Display(display_name)
    try:
        keycode = int(connection.keysym_to_keycode(XK.string_to_keysym(key)))
        xtest.fake_input(connection, 2, keycode)  # KeyPress
        xtest.fake_input(connection, 3, keycode)  # KeyRelease
        connection.sync()
        return keycode
    finally:
        connection.close()
