"""The broker on a wlroots compositor: agents' input on a seat of its own, the person's on theirs.

Wayland lets no client see another's input, so the broker cannot watch devices as it does on X11. It
can do what the compositor itself does for idle: on a compositor with several seats, the agent's
virtual keyboard and pointer (`zwp_virtual_keyboard_v1`, `zwlr_virtual_pointer_v1`) sit on the seat
`kronii-agent`, and the idle notifications of the person's seats (every other seat) fire only for the
person's input. With a short idle timeout, the person's first key or movement after a pause
is a "resumed" on their seat: the watcher closes the fence and the lease is taken back, and the injector,
which waits for the compositor after every event (a roundtrip), reads the same news on its own
connection before its next event. At most the event in flight when the person pressed lands after it.

The window an agent types into is given the agent seat's keyboard focus with the window list's
`activate(seat)`; the person's own focus stays where it is. sway makes the seat with one IPC command
(`seat kronii-agent fallback false`); elsewhere the person's compositor configuration must declare it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from kronii.broker.adapters.x_injection import InjectorUnavailable
from kronii.broker.ports import InjectionGuard
from kronii.desktop.input_actions import InputAction
from kronii.desktop.sway_ipc import SwayIpcError, run_command
from kronii.desktop.wayland_input import VirtualKeyboard, VirtualPointer, layout_box
from kronii.desktop.wayland_toplevels import AGENT_SEAT, TOPLEVEL_PROTOCOL, seat_names
from kronii.desktop.wayland_wire import WaylandConnection, WaylandError
from kronii.foundation.errors import InvalidArgument

__all__ = ["PERSON_IDLE_MS", "WaylandHands", "make_agent_seat", "person_seats_with_input"]

log = logging.getLogger(__name__)

# The person's seats go idle this long after their last input; their next input is then a "resumed".
# Shorter than the pause between a fast typist's keys, so even steady typing is seen.
PERSON_IDLE_MS = 20
_ACTIVATED = 2
_FIELDS = {"type": "text", "key": "keys", "click": "x", "move": "x", "scroll": "dy"}
_OWN_GRACE_S = 0.25
_FOCUS_WAIT_S = 0.2
_SETTLE_S = 0.01  # between the pointer's arrival and its press  # how long focused_window waits for an action being typed before it answers from memory  # input on the broker's seat this soon after its injection is still its own
_ACTIVATE = 4  # zwlr_foreign_toplevel_handle_v1.activate(seat)


def make_agent_seat(sway_socket: Path | None) -> str:
    """Ask sway for the broker's own seat; "" when done, else why not (a sentence)."""
    if sway_socket is None:
        return ""  # not sway: the seat must come from the compositor's own configuration
    try:
        run_command(sway_socket, f"seat {AGENT_SEAT} fallback false")
    except SwayIpcError as error:
        return f"sway did not make the broker's seat {AGENT_SEAT}: {error}"
    return ""


def person_seats_with_input(socket: Path) -> int:
    """How many of the person's seats have a keyboard or a pointer (wl_seat's capabilities): a person is
    attached to this desktop when one has. Raises WaylandError."""
    wire = WaylandConnection(socket, timeout_s=2.0)
    try:
        names: dict[int, str] = {}
        inputs: dict[int, int] = {}

        def on_seat(seat: int, opcode: int, args: list[object]) -> None:
            if opcode == 0:
                inputs[seat] = int(args[0])  # type: ignore[call-overload]
            elif opcode == 1:
                names[seat] = str(args[0])

        for offered in [item for item in wire.globals.values() if item.interface == "wl_seat"]:
            seat = wire.new_object("wl_seat", on_seat)
            wire.request(2, 0, offered.name, "wl_seat", min(2, offered.version), seat)
        wire.roundtrip()
        return sum(1 for seat, caps in inputs.items() if names.get(seat) != AGENT_SEAT and caps & 0b11)
    finally:
        wire.close()


class WaylandHands:
    """The Injector on a wlroots compositor. `start()` raises InjectorUnavailable with a sentence."""

    def __init__(self, socket: Path, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._socket = socket
        self._clock = clock
        self._lock = threading.Lock()
        self._wire: WaylandConnection | None = None
        self._keyboard: VirtualKeyboard | None = None
        self._pointer: VirtualPointer | None = None
        self._agent_seat = 0
        self._box = (0, 0, 0, 0)  # the output layout: its corner and size
        self._activated: dict[int, bool] = {}
        self._agent_window = 0  # the window the agent's seat activated, as far as this connection saw
        self._person_window = 0  # the last answer of focused_window
        self._acting = False  # events read now follow the agent's own input (else they came before it)
        self._person_input = False
        self._epoch = -1
        self._busy_since: float | None = None  # an injection under way, since (monotonic)
        self._busy_until = 0.0  # when the last one ended
        self.description = ""

    # ---- start and stop ----------------------------------------------------------------------

    def start(self) -> None:
        try:
            wire = WaylandConnection(self._socket)
        except WaylandError as error:
            raise InjectorUnavailable(str(error)) from None
        self._wire = wire  # the window list's events arrive during the start's roundtrips
        try:
            seats = seat_names(wire)
            agent = next((seat for seat, name in seats.items() if name == AGENT_SEAT), 0)
            if not agent:
                raise InjectorUnavailable(
                    f"the compositor has no seat named {AGENT_SEAT}: without a seat of its own the broker "
                    "cannot tell your input from an agent's (declare one in the compositor's configuration)"
                )
            self._watch_person(wire, [seat for seat, name in seats.items() if name != AGENT_SEAT])
            if wire.bind(TOPLEVEL_PROTOCOL, 3, self._on_manager) is None:
                raise InjectorUnavailable(
                    "the compositor offers no window list to give a window the agent's focus"
                )
            self._keyboard = VirtualKeyboard(wire, agent)
            self._pointer = VirtualPointer(wire, agent)
            self._box = layout_box(wire)
            wire.roundtrip()
        except (WaylandError, ValueError) as error:
            self.stop()
            raise InjectorUnavailable(
                f"the compositor refused the broker's virtual devices: {error}"
            ) from None
        except InjectorUnavailable:
            self.stop()
            raise
        self._agent_seat = agent
        self.description = f"a virtual keyboard and pointer on the seat {AGENT_SEAT}"

    def _watch_person(self, wire: WaylandConnection, seats: list[int]) -> None:
        """Idle notifications of the person's seats on this connection too: read at every roundtrip."""
        notifier = wire.bind("ext_idle_notifier_v1", 1)
        kde = None if notifier is not None else wire.bind("org_kde_kwin_idle", 1)
        if (notifier is None and kde is None) or not seats:
            raise InjectorUnavailable(
                "the compositor offers no idle notification: the person's input cannot be seen"
            )
        for seat in seats:
            if notifier is not None:
                notice = wire.new_object("ext_idle_notification_v1", self._on_person)
                wire.request(notifier, 1, notice, PERSON_IDLE_MS, seat)
            elif kde is not None:
                notice = wire.new_object("org_kde_kwin_idle_timeout", self._on_person)
                wire.request(kde, 0, notice, seat, PERSON_IDLE_MS)

    def stop(self) -> None:
        with self._lock:
            if self._wire is not None:
                self._wire.close()
                self._wire = None

    # ---- the compositor's events (under the lock, at a roundtrip) ---------------------------------

    def _on_person(self, _object_id: int, opcode: int, _args: list[object]) -> None:
        if opcode == 1:  # resumed: the person's input on one of their seats
            self._person_input = True

    def _on_manager(self, _object_id: int, opcode: int, args: list[object]) -> None:
        if opcode == 0 and self._wire is not None:  # a toplevel: its handle's events come to _on_handle
            handle = int(args[0])  # type: ignore[call-overload]
            self._activated[handle] = False
            self._wire.set_handler(handle, self._on_handle)

    def _on_handle(self, handle: int, opcode: int, args: list[object]) -> None:
        if opcode == 4:  # state
            raw = bytes(args[0])  # type: ignore[call-overload]
            states = {int.from_bytes(raw[i : i + 4], "little") for i in range(0, len(raw) - 3, 4)}
            now_active = _ACTIVATED in states
            if now_active and not self._activated.get(handle) and self._acting:
                self._agent_window = handle  # activated by the agent's own click or activate
            elif not now_active and handle == self._agent_window:
                self._agent_window = 0
            self._activated[handle] = now_active
        elif opcode == 6:  # closed
            self._activated.pop(handle, None)
            if self._agent_window == handle:
                self._agent_window = 0

    # ---- the caller's side -------------------------------------------------------------------

    def focused_window(self) -> int:
        """The person's window: the activated one that is not only the agent's (0 when none). Called on
        the event loop: while an action is being typed (the connection is busy) the last answer is given
        rather than waiting for it."""
        if not self._lock.acquire(timeout=_FOCUS_WAIT_S):
            return self._person_window
        try:
            wire = self._wire
            if wire is None:
                return 0
            wire.roundtrip()
            active = [handle for handle, on in self._activated.items() if on]
            mine = [handle for handle in active if handle != self._agent_window]
            self._person_window = (mine or active or [0])[0]
            return self._person_window
        finally:
            self._lock.release()

    def is_own(self, at: float) -> bool:
        """Whether input on the broker's seat at `at` (monotonic) is the broker's own: during an
        injection, or within a grace after it (the compositor's news comes a little later)."""
        busy_since = self._busy_since
        return (busy_since is not None and at >= busy_since) or at <= self._busy_until + _OWN_GRACE_S

    def inject(self, action: InputAction, window: int, guard: InjectionGuard) -> bool:
        with self._lock:
            wire, keyboard, pointer = self._wire, self._keyboard, self._pointer
            if wire is None or keyboard is None or pointer is None:
                raise InjectorUnavailable("the injector is not started")
            self._busy_since = self._clock()
            try:
                wire.roundtrip()  # what happened before this action: the person's focus changes among it
                self._acting = True
                return self._act(wire, keyboard, pointer, action, window, guard)
            except ValueError as error:  # a key name, a character or a point the seat cannot send
                raise InvalidArgument(str(error), field=_FIELDS[action.kind]) from None
            except WaylandError as error:
                raise InjectorUnavailable(f"the compositor closed the broker's connection: {error}") from None
            finally:
                if self._acting:  # the windows the action activated are the agent's
                    with contextlib.suppress(WaylandError):
                        wire.roundtrip()
                    self._acting = False
                self._busy_until, self._busy_since = self._clock(), None

    def _act(
        self,
        wire: WaylandConnection,
        keyboard: VirtualKeyboard,
        pointer: VirtualPointer,
        action: InputAction,
        window: int,
        guard: InjectionGuard,
    ) -> bool:
        if guard.epoch != self._epoch:  # a new lease: what the person did before it is the watcher's
            self._epoch, self._person_input = guard.epoch, False
        if self._person_input:
            guard.person_seen()
            return False
        if not guard.still_valid():
            return False
        if (
            action.kind in ("key", "type")
            and window
            and window in self._activated
            and window != self._agent_window
        ):
            wire.request(window, _ACTIVATE, self._agent_seat)
            wire.roundtrip()
            self._agent_window = window  # also when it was active already: the person's is the same window

        def check() -> bool:
            wire.roundtrip()  # the compositor took the last event; its news of the person is read
            if self._person_input:
                guard.person_seen()
                return False
            return guard.still_valid()

        left, top, width, height = self._box
        if (
            action.kind == "type"
        ):  # a typed CR is a Return, as in a terminal; other control characters refused
            return keyboard.type_text(action.text.replace("\r\n", "\n").replace("\r", "\n"), check)
        if action.kind == "key":
            return keyboard.chord(action.keys, check)
        if action.kind == "click":
            # The pointer is at the point before the press, in a frame of its own: GTK3 missed a press
            # that came in the frame of the pointer's first motion into its window.
            pointer.move(action.x - left, action.y - top, width, height)
            wire.roundtrip()
            time.sleep(_SETTLE_S)
            return pointer.click(action.x - left, action.y - top, action.button, width, height, check)
        if action.kind == "move":
            pointer.move(action.x - left, action.y - top, width, height)
            wire.roundtrip()
            return True
        return pointer.scroll(action.dx, action.dy, check)
