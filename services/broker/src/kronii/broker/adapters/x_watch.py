"""Sees the person's hands: XI2 raw input that is not the agent's, a STOP hotkey, and which physical input
devices are present.

Raw events are selected on the root window for XIAllMasterDevices by a client that announced XI 2.2: each
physical event then arrives once, `deviceid` naming the master and `sourceid` the slave that produced it
(selecting XIAllDevices would deliver every event twice, once per slave and once per master). Raw events
are delivered whatever window has focus and whatever grab is active, so they see input to every window.

Each event is one of three, by the device it came from (`sourceid`):

- the agent's own, when the injector says so (`is_own`): for the master-device injector, its source
  is one of the broker's XTEST slaves; for the plain-XTEST fallback, it comes from an XTEST device
  inside an injection window (asked first, so the fallback's own events are never taken for the rest);
- automation that went around the broker, when it comes from the core XTEST devices ("Virtual core
  XTEST keyboard/pointer"), the ones every plain XTEST client shares (xdotool, pyautogui, a script's
  python-xlib): it closes the fence (cause "unbrokered_input") and goes to `on_unbrokered_input`,
  debounced as the person's is (the finder behind it looks the sender up at most once a second, and
  the table acts once per lease: a flood of xdotool events is one finding);
- the person's, for everything else: physical devices' slaves and other masters' slaves, among them
  the VNC viewers' master, on which the broker replays their input. On this thread it first closes the input fence
  (`close_fence`: no agent event is written under the current epoch after that, whatever the event
  loop is doing), then it is handed to the loop (`on_user_input`); later events within the debounce
  interval that close nothing new are not handed over, so a motion storm costs one call per 50 ms.

What reached the screen is measured here too, since this connection sees both the person's events and
the agent's in the order the X server processed them: after a person's event that closed the fence
while the agent was typing, the agent's events that still arrive are counted, and the person's event to
the last of them is reported (`on_at_screen`, 0 when none came after).

The hotkey is a core XGrabKey on the root, so it fires for the person's keyboard (the core keyboard and
its slaves), not for the agent's master. It is grabbed with and without NumLock and CapsLock, since a
core grab matches the exact modifier state.
"""

from __future__ import annotations

import logging
import os
import select
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal, Protocol

from kronii.broker.adapters import x_protocol
from kronii.broker.adapters.x_keymap import keysym_for_name
from kronii.broker.adapters.x_master import BROKER_MASTER_NAME
from kronii.broker.adapters.x_protocol import CORE_XTEST_DEVICES
from kronii.broker.core.facts import UserInputSeen
from Xlib import XK, X
from Xlib import display as xdisplay
from Xlib import error as xerror
from Xlib.ext import ge, xinput

__all__ = [
    "CORE_XTEST_DEVICES",
    "DEFAULT_HOTKEYS",
    "OwnInput",
    "RawInputWatcher",
    "UserInputSeen",
    "physical_input_devices",
]

log = logging.getLogger(__name__)

DEFAULT_HOTKEYS = ("ctrl+alt+Escape", "Pause")
DEBOUNCE_S = 0.05
_STOP_TIMEOUT_S = 2.0
# After a person's event, how long the agent's late events are looked for; and how recent the
# agent's last event must be for the person's event to count as one that interrupted it.
AT_SCREEN_WINDOW_S = 0.5
_RAW_KINDS: dict[int, Literal["key", "button", "motion"]] = {
    xinput.RawKeyPress: "key",
    xinput.RawButtonPress: "button",
    xinput.RawMotion: "motion",
}
_MODIFIER_MASKS = {
    "ctrl": X.ControlMask,
    "control": X.ControlMask,
    "shift": X.ShiftMask,
    "alt": X.Mod1Mask,
    "super": X.Mod4Mask,
    "win": X.Mod4Mask,
}
# Devices that are not a person's hands even though they are slave keyboards or pointers.
_NOT_PHYSICAL_PREFIXES = ("Virtual core", "Xvfb", "Power Button", "Sleep Button", "Video Bus", "Lid Switch")


class OwnInput(Protocol):
    """The injector, as the watcher sees it: which raw events are the agent's own."""

    def is_own(self, source_id: int, source_name: str, at: float) -> bool: ...


def _is_physical(name: str, broker_name: str) -> bool:
    return not (
        name.startswith(_NOT_PHYSICAL_PREFIXES) or "XTEST" in name or name.startswith(f"{broker_name} ")
    )


def physical_input_devices(display_name: str, broker_name: str = BROKER_MASTER_NAME) -> list[str]:
    """Names of enabled slave keyboards and pointers that a person could be using."""
    display = xdisplay.Display(display_name)
    try:
        devices = display.xinput_query_device(xinput.AllDevices).devices
    finally:
        display.close()
    return sorted(
        device.name
        for device in devices
        if device.enabled
        and device.use in (xinput.SlavePointer, xinput.SlaveKeyboard)
        and _is_physical(device.name, broker_name)
    )


class _Hotkeys:
    """Passive core key grabs on the root for each chord, in every NumLock/CapsLock combination."""

    def __init__(self, display: Any, chords: Iterable[str]) -> None:
        self._display = display
        self._chords = list(chords)
        self._grabbed: set[tuple[int, int]] = set()

    def _num_lock_mask(self) -> int:
        num_lock = set(self._keycodes(XK.XK_Num_Lock))
        for index, keycodes in enumerate(self._display.get_modifier_mapping()):
            if num_lock & set(keycodes):
                return 1 << index
        return int(X.Mod2Mask)

    def _keycodes(self, keysym: int) -> list[int]:
        return [code for code, _ in self._display.keysym_to_keycodes(keysym)]

    def grab(self) -> None:
        root = self._display.screen().root
        num_lock = self._num_lock_mask()
        for chord in self._chords:
            *modifiers, key = chord.split("+")
            mask = 0
            for modifier in modifiers:
                mask |= _MODIFIER_MASKS[modifier.lower()]
            keycodes = self._keycodes(keysym_for_name(key))
            if not keycodes:
                log.warning("hotkey %s: no key on the keyboard produces %s", chord, key)
            for keycode in keycodes[:1]:
                for extra in (0, num_lock, X.LockMask, num_lock | X.LockMask):
                    catcher = xerror.CatchError(xerror.BadAccess)
                    root.grab_key(
                        keycode, mask | extra, False, X.GrabModeAsync, X.GrabModeAsync, onerror=catcher
                    )
                    self._display.sync()
                    if catcher.get_error():
                        log.warning("hotkey %s is already grabbed by another client", chord)
                        break
                    self._grabbed.add((keycode, mask | extra))

    def matches(self, event: Any) -> bool:
        return (event.detail, event.state & 0xFF) in self._grabbed


class AtScreen:
    """The agent's events the X server took after a person's event that interrupted the agent (see
    the module docstring); `report(delay_s, count)` once the window has passed."""

    def __init__(
        self,
        report: Callable[[float, int], None],
        same_lease: Callable[[], bool] = lambda: True,
        window_s: float = AT_SCREEN_WINDOW_S,
    ) -> None:
        self._report = report
        self._same_lease = same_lease
        self._window_s = window_s
        self._last_own = float("-inf")
        self._person_at: float | None = None
        self._late = 0
        self._last_late = 0.0

    def own(self, at: float) -> None:
        self._last_own = at
        if self._person_at is None:
            return
        if not self._same_lease():
            self.settle(at, force=True)  # a new lease's typing is not late: the person's was answered
            return
        self._late += 1
        self._last_late = at

    def person(self, at: float) -> None:
        """A person's event that closed the fence; it interrupted the agent if the agent was typing."""
        if self._person_at is None and at - self._last_own <= self._window_s:
            self._person_at, self._late, self._last_late = at, 0, at

    def due_in(self, now: float) -> float | None:
        """Seconds until the window closes (None when nothing is being measured)."""
        if self._person_at is None:
            return None
        return max(0.0, self._person_at + self._window_s - now)

    def settle(self, now: float, *, force: bool = False) -> None:
        if self._person_at is None or (not force and now < self._person_at + self._window_s):
            return
        delay, count = self._last_late - self._person_at, self._late
        self._person_at = None
        self._report(delay, count)


class RawInputWatcher:
    """A daemon thread reporting a person's input and the STOP hotkey (see the module docstring)."""

    def __init__(
        self,
        display_name: str,
        on_user_input: Callable[[UserInputSeen], None],
        on_hotkey: Callable[[], None],
        own_input: OwnInput | None = None,
        hotkeys: Sequence[str] = DEFAULT_HOTKEYS,
        broker_name: str = BROKER_MASTER_NAME,
        debounce_s: float = DEBOUNCE_S,
        close_fence: Callable[[str], bool] | None = None,
        on_at_screen: Callable[[float, int], None] | None = None,
        fence_still_closed: Callable[[], bool] = lambda: True,
        on_unbrokered_input: Callable[[UserInputSeen], None] | None = None,
    ) -> None:
        self._display_name = display_name
        self._on_user_input = on_user_input
        self._on_hotkey = on_hotkey
        self._own_input = own_input
        self._close_fence = close_fence or (lambda cause: False)
        self._at_screen = AtScreen(on_at_screen or (lambda delay, count: None), fence_still_closed)
        self._hotkey_chords = tuple(hotkeys)
        self._broker_name = broker_name
        self._debounce_s = debounce_s
        self._on_unbrokered_input = on_unbrokered_input or (lambda seen: None)
        self._last_report = float("-inf")
        self._last_unbrokered = float("-inf")
        self._names: dict[int, str] = {}
        self._display: Any = None
        self._thread: threading.Thread | None = None
        self._wake_read, self._wake_write = -1, -1

    def physical_input_devices(self) -> list[str]:
        return physical_input_devices(self._display_name, self._broker_name)

    def start(self) -> None:
        """Selects the events and grabs the hotkeys before returning, so no input after start() is missed."""
        display = xdisplay.Display(self._display_name)
        try:
            x_protocol.query_version(display)
            x_protocol.register_raw_events(display)
            root = display.screen().root
            raw_mask = sum(1 << event_type for event_type in _RAW_KINDS)
            root.xinput_select_events(
                [(xinput.AllMasterDevices, raw_mask), (xinput.AllDevices, xinput.HierarchyChangedMask)]
            )
            self._hotkeys = _Hotkeys(display, self._hotkey_chords)
            self._hotkeys.grab()
            self._refresh_names(display)
            display.sync()
        except BaseException:
            display.close()
            raise
        self._display = display
        self._wake_read, self._wake_write = os.pipe()
        self._thread = threading.Thread(target=self._run, name="broker-raw-input", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        thread = self._thread
        if thread is None:
            return
        os.write(self._wake_write, b"x")
        thread.join(_STOP_TIMEOUT_S)
        self._thread = None
        self._display.close()
        os.close(self._wake_read)
        os.close(self._wake_write)

    def _refresh_names(self, display: Any) -> None:
        devices = display.xinput_query_device(xinput.AllDevices).devices
        self._names = {device.deviceid: device.name for device in devices}

    def _run(self) -> None:
        display = self._display
        try:
            while True:
                # Events already read into python-xlib's queue would not wake select(): drain first.
                while display.pending_events():
                    self._dispatch(display, display.next_event())
                self._at_screen.settle(time.monotonic())
                timeout = self._at_screen.due_in(time.monotonic())
                readable, _, _ = select.select([display.fileno(), self._wake_read], [], [], timeout)
                if self._wake_read in readable:
                    self._at_screen.settle(time.monotonic(), force=True)
                    return
        except (xerror.ConnectionClosedError, OSError) as exc:
            log.warning("raw input watcher lost its X connection: %s", exc)

    def _dispatch(self, display: Any, event: Any) -> None:
        try:
            self._handle(display, event)
        except (xerror.ConnectionClosedError, OSError):
            raise
        except Exception:
            log.exception("raw input watcher: handling %s failed", type(event).__name__)

    def _handle(self, display: Any, event: Any) -> None:
        if event.type == X.KeyPress:
            if self._hotkeys.matches(event):
                self._on_hotkey()
            return
        if event.type != ge.GenericEventCode:
            return
        if event.evtype == xinput.HierarchyChanged:
            self._refresh_names(display)
        elif event.evtype in _RAW_KINDS:
            self._raw(display, event.evtype, event.data.sourceid)

    def _raw(self, display: Any, evtype: int, source_id: int) -> None:
        at = time.monotonic()
        name = self._names.get(source_id)
        if name is None:
            self._refresh_names(display)
            name = self._names.get(source_id, "")
        if self._own_input is not None and self._own_input.is_own(source_id, name, at):
            self._at_screen.own(at)
            return
        if name in CORE_XTEST_DEVICES:
            self._unbrokered(UserInputSeen(_RAW_KINDS[evtype], source_id, name, at))
            return
        closed = self._close_fence("user_input")
        if closed:
            self._at_screen.person(at)
        elif at - self._last_report < self._debounce_s:
            return
        self._last_report = at
        self._on_user_input(UserInputSeen(_RAW_KINDS[evtype], source_id, name, at))

    def _unbrokered(self, seen: UserInputSeen) -> None:
        closed = self._close_fence("unbrokered_input")
        # Not only when it closed the fence: the injector may have closed it first, and the table
        # must still hear of it for this lease.
        if not closed and seen.at - self._last_unbrokered < self._debounce_s:
            return
        self._last_unbrokered = seen.at
        self._on_unbrokered_input(seen)
