"""What both injectors share: an InputAction turned into XTEST events on one connection, each event
asked for by the guard first, and whatever is held let go when an action stops. Both injectors
(x_master.py, x_plain_xtest.py) are blocking and meant for one worker thread.

The unit a person can overtake is one event, and what decides is the order in which the X server
processes them. The injector's own connection selects the XI2 raw events of every master, so the X
server tells it, in its own order, about every input event it processed. Agent events are written in
batches of at most BATCH_EVENTS under a server grab: the grab, a round trip (every event the server
processed before the grab is now in this connection's queue), a look at that queue for an event that
is not the broker's own (the person's, or automation's), and only then the batch, each event asked for
by the guard and written at once, and the grab let go. While the grab is held the server processes no
other client's request, so a person's key from a viewer (or any XTEST client) is either processed
before the check, and seen by it, or after the whole batch: it cannot land in between. Input from
physical devices is queued by the server's own input thread and may be processed during a grab; for
it, at most BATCH_EVENTS - 1 agent events can follow the person's. The grab is held for one round trip
and a few writes, never across a wait on anything else.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kronii.broker.adapters import x_protocol
from kronii.broker.adapters.x_keymap import CHARACTER_KEYSYMS, Keymap, keysym_for_character, keysym_for_name
from kronii.broker.ports import InjectionGuard
from kronii.desktop.input_actions import InputAction
from Xlib import XK, X
from Xlib.ext import ge, xinput, xtest

__all__ = [
    "BATCH_EVENTS",
    "InjectorUnavailable",
    "OwnQueue",
    "Performer",
    "Sender",
    "begin_action",
    "run_action",
]

_SCROLL_BUTTONS = {(0, -1): 4, (0, 1): 5, (-1, 0): 6, (1, 0): 7}
# Agent events written under one server grab, after one look for the person's (see the docstring).
BATCH_EVENTS = 8
_RAW_INPUT = (xinput.RawKeyPress, xinput.RawButtonPress, xinput.RawMotion)


class InjectorUnavailable(RuntimeError):
    """The X server cannot host the injector (no XInput 2.2 or XTEST, or the master was not created)."""


class _Stopped(Exception):
    """The guard said no, or the person's input was seen: the action ends here."""


class OwnQueue:
    """The injector connection's event queue: MappingNotify (every client gets it) and, once
    `watch_input` ran, the raw input events of every master, told apart by `is_own_source`. A
    foreign event read is remembered until taken, whoever read it (an action, or the idle drain)."""

    def __init__(self, display: Any, is_own_source: Callable[[int], bool]) -> None:
        self._display = display
        self._is_own_source = is_own_source
        self.watching = False
        self.mapping_changed = False
        self._foreign = False

    def watch_input(self) -> bool:
        """Select the raw input events on the root (XInput 2.2 needed); False where the server cannot."""
        try:
            if x_protocol.query_version(self._display) < (2, 2):
                return False
            x_protocol.register_raw_events(self._display)
            mask = sum(1 << event_type for event_type in _RAW_INPUT)
            self._display.screen().root.xinput_select_events([(xinput.AllMasterDevices, mask)])
            self._display.sync()
        except Exception:  # no XInput2 on this server: the guard alone decides
            return False
        self.watching = True
        return True

    def read(self) -> bool:
        """Empties what has arrived; True while a foreign input event read (now or before) is untaken."""
        display = self._display
        while display.pending_events():
            event = display.next_event()
            if event.type == X.MappingNotify:
                self.mapping_changed = True
            elif (
                event.type == ge.GenericEventCode
                and event.evtype in _RAW_INPUT
                and not self._is_own_source(event.data.sourceid)
            ):
                self._foreign = True
        return self._foreign

    def take_foreign(self) -> bool:
        """Whether a foreign input event was read since the last take; forgets it."""
        foreign, self._foreign = self._foreign, False
        return foreign

    def take_mapping_change(self) -> bool:
        changed, self.mapping_changed = self.mapping_changed, False
        return changed


class Sender:
    """XTEST events on one connection, in guarded batches (see the module docstring); remembers what
    is held down so an interrupted action can let go of it."""

    def __init__(self, display: Any, guard: InjectionGuard, queue: OwnQueue | None = None) -> None:
        self._display = display
        self._guard = guard
        self._queue = queue if queue is not None and queue.watching else None
        self._held: list[tuple[int, int]] = []
        self._in_batch = 0

    def _begin_batch(self) -> None:
        if self._queue is None:
            return
        self._display.grab_server()
        self._display.sync()
        self._queue.read()
        if self._queue.take_foreign():
            self._end_batch()
            self._guard.person_seen()
            raise _Stopped

    def _end_batch(self) -> None:
        if self._queue is not None:
            self._display.ungrab_server()
            self._display.flush()
        self._in_batch = 0

    def _send(self, event_type: int, detail: int, **where: int) -> None:
        """One event, asked for first and written to the X server at once (python-xlib queues its
        requests until a flush: without one a whole action, checked in a few microseconds, went out
        after a stop that came while it was typed)."""
        if self._in_batch == 0:
            self._begin_batch()
        if not self._guard.still_valid():
            self._end_batch()
            raise _Stopped
        xtest.fake_input(self._display, event_type, detail, **where)
        self._display.flush()
        self._in_batch += 1
        if self._in_batch >= BATCH_EVENTS:
            self._end_batch()
            if self._queue is None:
                self._display.sync()  # without the queue's look, a round trip bounds what is in flight

    def finish(self) -> None:
        if self._in_batch:
            self._end_batch()

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

    def _find(self, keysym: int, sender: Sender) -> tuple[int, bool]:
        if not self.keymap.known(keysym):
            # Binding a spare keycode writes the map on the other connection too, and waits: never
            # while this one holds the server.
            sender.finish()
        return self.keymap.find(keysym)

    def _chord(self, chord: str, sender: Sender) -> None:
        keysyms = [keysym_for_name(name) for name in chord.split("+")]
        keycodes: list[int] = []
        shift = self._find(XK.XK_Shift_L, sender)[0]
        for keysym in keysyms:
            keycode, needs_shift = self._find(keysym, sender)
            if needs_shift and shift not in keycodes:
                keycodes.append(shift)
            keycodes.append(keycode)
        for keycode in keycodes:
            sender.press(X.KeyPress, keycode)
        for keycode in reversed(keycodes):
            sender.release(X.KeyRelease, keycode)

    def _type(self, text: str, sender: Sender) -> None:
        shift = self._find(XK.XK_Shift_L, sender)[0]
        for character in text:
            if not character.isprintable() and character not in CHARACTER_KEYSYMS:
                continue
            keycode, needs_shift = self._find(keysym_for_character(character), sender)
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


def begin_action(display: Any, queue: OwnQueue, guard: InjectionGuard, last_epoch: int) -> bool:
    """Before an action's first event: what arrived since the last action. Under the same lease a
    foreign input event is the person's (or automation's), seen before the watcher's news reached
    the guard: the action does not start. The first action of a new lease reads and forgets what
    came before it: that input predates the lease (the watcher judges it)."""
    queue.read()
    if guard.epoch != last_epoch:
        display.sync()
        queue.read()
        queue.take_foreign()
        return True
    if queue.take_foreign():
        guard.person_seen()
        return False
    return True


def run_action(action: InputAction, performer: Performer, sender: Sender, display: Any) -> bool:
    try:
        performer.perform(action, sender)
        sender.finish()
    except _Stopped:
        sender.let_go()
        return False
    except BaseException:
        sender.finish()
        raise
    finally:
        display.sync()
    return True
