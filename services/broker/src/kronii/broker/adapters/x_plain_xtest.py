"""The broker's fallback hands on an X desktop (`broker.injection = "xtest"`), for servers where
creating a master fails: plain XTEST on the core devices, as xdotool does. It is weaker than
x_master.py's: its events come from "Virtual core XTEST pointer/keyboard", the same devices any other
XTEST client (xdotool, a remote desktop tool) uses, so it can only record *when* it injected; any
core XTEST event inside such a window is taken as the agent's, and xdotool run by someone else during
that window looks like the agent. Another master's XTEST slaves (a VNC viewer's, the person's) are
never the agent's. Setting the focus for its keys moves the person's focus too.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any

from kronii.broker.adapters.x_injection import (
    InjectorUnavailable,
    OwnQueue,
    Performer,
    Sender,
    begin_action,
    run_action,
)
from kronii.broker.adapters.x_keymap import Keymap
from kronii.broker.adapters.x_protocol import CORE_XTEST_DEVICES
from kronii.broker.adapters.x_queue_drain import QueueDrain
from kronii.broker.ports import InjectionGuard
from kronii.desktop.input_actions import InputAction
from Xlib import X
from Xlib import display as xdisplay
from Xlib.ext import xinput, xtest

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
        self._queue: OwnQueue | None = None
        self._drain: QueueDrain | None = None
        self._core_xtest: frozenset[int] = frozenset()
        self._epoch = -1

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
        if source_name not in CORE_XTEST_DEVICES:
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
            # Its events come from the core XTEST devices, as anyone's plain XTEST does: while it
            # types, those are taken as its own; a viewer's or a physical device's are the person's.
            self._queue = OwnQueue(display, lambda source: source in self._core_xtest)
            if self._queue.watch_input():
                devices = display.xinput_query_device(xinput.AllDevices).devices
                self._core_xtest = frozenset(d.deviceid for d in devices if d.name in CORE_XTEST_DEVICES)
            self._drain = QueueDrain(self._lock, (self._queue,))
            self._drain.start()

    def inject(self, action: InputAction, window: int, guard: InjectionGuard) -> bool:
        with self._lock:
            if self._performer is None or self._queue is None:
                raise InjectorUnavailable("the injector is not started")
            if not begin_action(self._display, self._queue, guard, self._epoch):
                return False
            self._epoch = guard.epoch
            if self._queue.take_mapping_change():
                self._performer.keymap.reload()
            if not guard.still_valid():
                return False
            with self._windows_lock:
                self._open_since = time.monotonic()
            try:
                if window and action.kind in ("key", "type"):
                    self._display.set_input_focus(window, X.RevertToParent, X.CurrentTime)
                sender = Sender(self._display, guard, self._queue)
                return run_action(action, self._performer, sender, self._display)
            finally:
                with self._windows_lock:
                    if self._open_since is not None:
                        self._windows.append((self._open_since, time.monotonic()))
                    self._open_since = None

    def stop(self) -> None:
        if self._drain is not None:
            self._drain.stop()
        with self._lock:
            if self._display is not None:
                try:
                    if self._performer is not None:
                        self._performer.keymap.unbind_all()
                finally:
                    self._display.close()
                    self._display = self._performer = self._queue = self._drain = None
