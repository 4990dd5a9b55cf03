"""The broker's fallback hands on an X desktop (`broker.injection = "xtest"`), for servers where
creating a master fails: plain XTEST on the core devices, as xdotool does. It is weaker than
x_master.py's: its events come from "Virtual core XTEST pointer/keyboard", the same devices any other
XTEST client (xdotool, a remote desktop tool) uses, so it can only record *when* it injected; any
XTEST event inside such a window is taken as the agent's, and xdotool run by someone else during that
window looks like the agent. Setting the focus for its keys moves the person's focus too.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from kronii.broker.adapters.x_injection import (
    InjectorUnavailable,
    Performer,
    Sender,
    drain_mapping_changes,
    run_action,
)
from kronii.broker.adapters.x_keymap import Keymap
from kronii.desktop.input_actions import InputAction
from Xlib import X
from Xlib import display as xdisplay
from Xlib.ext import xtest

__all__ = ["ATTRIBUTION_GRACE_S", "PlainXTestInjector"]

# A raw event reaches the watcher a little after the injection's sync returned.
ATTRIBUTION_GRACE_S = 0.1
_KEPT_WINDOWS = 256


class PlainXTestInjector:
    """Fallback: XTEST on the core devices, attributed by time (see the module docstring)."""

    def __init__(self, display_name: str) -> None:
        self._display_name = display_name
        self._lock = threading.Lock()
        self._windows_lock = threading.Lock()
        self._display: Any = None
        self._performer: Performer | None = None
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
            self._performer = Performer(display, Keymap(display, (display,)))

    def inject(self, action: InputAction, window: int, still_valid: Callable[[], bool]) -> bool:
        with self._lock:
            if self._performer is None:
                raise InjectorUnavailable("the injector is not started")
            if drain_mapping_changes(self._display):
                self._performer.keymap.reload()
            if not still_valid():
                return False
            with self._windows_lock:
                self._open_since = time.monotonic()
            try:
                if window and action.kind in ("key", "type"):
                    self._display.set_input_focus(window, X.RevertToParent, X.CurrentTime)
                return run_action(action, self._performer, Sender(self._display, still_valid), self._display)
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
