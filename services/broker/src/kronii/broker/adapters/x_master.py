"""The broker's hands on an X desktop: agent input through XTEST, on the broker's own master device.

`XMasterInjector` (setting `broker.injection = "master"`, the default) creates an XInput2 master device
pair, "kronii-broker pointer"/"kronii-broker keyboard"; the server gives it two XTEST slaves
("kronii-broker XTEST pointer"/"... keyboard"). Its connection's ClientPointer is that master, so every
XTEST request on it comes out of those slaves. Hence:

- the agent's raw events carry the broker's slave ids as `sourceid`, and anything else is someone
  else's input: the person's devices and viewers, or automation on the core XTEST device such as
  `xdotool` (the watcher in x_watch.py and the injector's own look before each batch rely on this);
- the agent's keyboard has its own focus (XISetFocus) and its own modifier state: its keys reach the
  leased window while the person types elsewhere, and the person's held Shift does not leak in;
- the agent's pointer is a second cursor; the person's cursor does not move under them.

Window managers are not MPX-aware: the core FocusIn the agent's focus produces makes openbox (and most
others) set _NET_ACTIVE_WINDOW to the leased window, though the person's keyboard focus stays where it
was; a click by the agent is a core click too, which the window manager may answer by activating the
window for the person.

Where creating a master fails, x_plain_xtest.py's `PlainXTestInjector` is the fallback. The actions'
XTEST events and the keys are x_injection.py's and x_keymap.py's.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from kronii.broker.adapters import x_protocol
from kronii.broker.adapters.x_injection import (
    InjectorUnavailable,
    OwnQueue,
    Performer,
    Sender,
    begin_action,
    run_action,
)
from kronii.broker.adapters.x_keymap import Keymap
from kronii.broker.adapters.x_queue_drain import QueueDrain
from kronii.broker.ports import InjectionGuard
from kronii.desktop.input_actions import InputAction
from Xlib import X
from Xlib import display as xdisplay
from Xlib import error as xerror
from Xlib.ext import xinput, xtest

__all__ = ["BROKER_MASTER_NAME", "XMasterInjector"]

BROKER_MASTER_NAME = "kronii-broker"
VIRTUAL_CORE_POINTER = "Virtual core pointer"
VIRTUAL_CORE_KEYBOARD = "Virtual core keyboard"


def _require_extensions(display: Any) -> None:
    for name in (xinput.extname, xtest.extname):
        if not display.has_extension(name):
            raise InjectorUnavailable(f"the X server has no {name} extension")
    major, minor = x_protocol.query_version(display)
    if (major, minor) < (2, 2):
        raise InjectorUnavailable(f"the X server speaks XInput {major}.{minor}; the broker needs 2.2")


def _devices(display: Any) -> dict[str, Any]:
    return {device.name: device for device in display.xinput_query_device(xinput.AllDevices).devices}


class XMasterInjector:
    """Agent input through the broker's own XInput2 master device (see the module docstring)."""

    def __init__(self, display_name: str, name: str = BROKER_MASTER_NAME) -> None:
        self._display_name = display_name
        self._name = name
        self._lock = threading.Lock()
        self._display: Any = None
        self._core: Any = None
        self._performer: Performer | None = None
        self._pointer = self._keyboard = 0
        self._core_pointer = self._core_keyboard = 0
        self._sources: frozenset[int] = frozenset()
        self._queue: OwnQueue | None = None
        self._core_queue: OwnQueue | None = None
        self._epoch = -1
        self._drain: QueueDrain | None = None

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
            self._performer = Performer(display, Keymap(self._core, (self._core, display)))
            self._queue = OwnQueue(display, lambda source: source in self._sources)
            self._queue.watch_input()
            self._core_queue = OwnQueue(self._core, lambda source: True)
            self._drain = QueueDrain(self._lock, (self._queue, self._core_queue))
            self._drain.start()

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

    def inject(self, action: InputAction, window: int, guard: InjectionGuard) -> bool:
        """Performs the action; False (and nothing sent after that) as soon as the guard says no or
        the person's input is seen."""
        with self._lock:
            if self._performer is None or self._queue is None or self._core_queue is None:
                raise InjectorUnavailable("the injector is not started")
            if not begin_action(self._display, self._queue, guard, self._epoch):
                return False
            self._epoch = guard.epoch
            self._core_queue.read()
            if self._queue.take_mapping_change() | self._core_queue.take_mapping_change():
                self._performer.keymap.reload()
            if not guard.still_valid():
                return False
            if action.kind in ("key", "type"):
                focus = window or x_protocol.get_focus(self._display, self._core_keyboard)
                x_protocol.set_focus(self._display, self._keyboard, focus)
            sender = Sender(self._display, guard, self._queue)
            return run_action(action, self._performer, sender, self._display)

    @contextlib.contextmanager
    def quiet(self) -> Iterator[None]:
        """While held, no action is being written: one under way has stopped (or ended) and its
        events have all been processed by the X server (each action ends with a round trip)."""
        with self._lock:
            yield

    def replay_key(self, keysym: int, down: bool) -> None:
        """A person's key as a viewer sent it, on this master, where the core keyboard's focus is.
        Unchecked: it is the person's, not an agent's. Synced: processed when this returns."""
        with self._lock:
            if self._performer is None:
                raise InjectorUnavailable("the injector is not started")
            keycode, _ = self._performer.keymap.find(keysym)  # the viewer sends its own Shift
            x_protocol.set_focus(
                self._display, self._keyboard, x_protocol.get_focus(self._display, self._core_keyboard)
            )
            xtest.fake_input(self._display, X.KeyPress if down else X.KeyRelease, keycode)
            self._display.sync()

    def replay_pointer(self, x: int, y: int, buttons: list[tuple[int, bool]]) -> None:
        """A person's pointer as a viewer sent it: to (x, y), then the buttons that changed."""
        with self._lock:
            if self._display is None:
                raise InjectorUnavailable("the injector is not started")
            root = self._display.screen().root.id
            xtest.fake_input(self._display, X.MotionNotify, 0, root=root, x=x, y=y)
            for button, pressed in buttons:
                xtest.fake_input(self._display, X.ButtonPress if pressed else X.ButtonRelease, button)
            self._display.sync()

    def stop(self) -> None:
        """Removes the master (physical slaves, if any were moved to it, go back to the core devices)."""
        if self._drain is not None:
            self._drain.stop()
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
                self._queue = self._core_queue = self._drain = None
                self._sources = frozenset()
