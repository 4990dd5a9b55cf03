"""The windows of a Wayland session and which one the person is in, and whether they are idle: from the
protocols a compositor offers to any client, not from one compositor's own IPC.

- Focus and titles: `zwlr_foreign_toplevel_manager_v1` (every wlroots compositor: sway, Hyprland, river,
  labwc, wayfire). Each toplevel's title, app id and state arrive as events closed by `done`; the one
  whose state holds `activated` is the focused window. Changes are judged after each read from the
  socket, so the old window's deactivation and the new one's activation (sent together) make one change,
  not a flicker through "nothing focused".
- Idle: `ext_idle_notifier_v1` where offered, else KDE's `org_kde_kwin_idle` (sway 1.7). Both say
  "idle" after a timeout without input and "resumed" at the next input; with a short timeout the idle
  time is known to within it. Idle is per seat: the person's seats are every seat but the input broker's
  own (`AGENT_SEAT`), whose agent input must not count as the person's.

One connection, owned by one thread (`start`); the readers (`focused`, `idle_ms`) take a lock.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from .wayland_wire import WaylandConnection, WaylandError

__all__ = ["AGENT_SEAT", "IDLE_PROTOCOLS", "TOPLEVEL_PROTOCOL", "Toplevel", "ToplevelWatch", "seat_names"]

AGENT_SEAT = "kronii-agent"  # the input broker's own seat: its virtual keyboard and pointer are there
TOPLEVEL_PROTOCOL = "zwlr_foreign_toplevel_manager_v1"
IDLE_PROTOCOLS = ("ext_idle_notifier_v1", "org_kde_kwin_idle")
_ACTIVATED = 2  # zwlr_foreign_toplevel_handle_v1.state
_MINIMIZED = 1


@dataclass(frozen=True)
class Toplevel:
    """A window as the compositor lists it. `handle` is the compositor's object id for it: unique while
    the window lives, not across sessions."""

    handle: int
    app_id: str = ""
    title: str = ""
    activated: bool = False
    minimized: bool = False


class ToplevelWatch:
    """Toplevels and idle on one compositor socket. Raises WaylandError at construction when the socket
    does not answer; `has_focus` / `has_idle` say what the compositor offers."""

    def __init__(
        self,
        path: Path,
        *,
        idle_timeout_ms: int = 1000,
        clock: Callable[[], float] = time.monotonic,
        on_input: Callable[[str, float], None] | None = None,
        watch_agent_seat: bool = False,
    ):
        """`on_input(seat, at)` runs on the watcher's thread at a person's first input after
        `idle_timeout_ms` without any (the idle protocols' "resumed"), `at` on `clock`; with
        `watch_agent_seat`, at the first input on the broker's own seat too (its name is AGENT_SEAT)."""
        self.path = path
        self._on_input = on_input
        self._watch_agent_seat = watch_agent_seat
        self._agent_seats: dict[int, str] = {}
        self._clock = clock
        self._idle_timeout_ms = idle_timeout_ms
        self._wire = WaylandConnection(path)
        self._lock = threading.Lock()
        self._pending: dict[int, Toplevel] = {}
        self._toplevels: dict[int, Toplevel] = {}
        # Per person's seat, the time of its last input while it is idle (a seat with recent input is absent).
        self._idle_seats: dict[int, float] = {}
        self._seat_names: dict[int, str] = {}
        self._focused: Toplevel | None = None
        self._on_focus: Callable[[Toplevel | None], None] | None = None
        self._stop_read, self._stop_write = os.pipe()
        self._thread: threading.Thread | None = None
        self.error = ""
        self.has_focus = self._wire.bind(TOPLEVEL_PROTOCOL, 3, self._on_manager) is not None
        self.idle_protocol = self._bind_idle()
        self.has_idle = self.idle_protocol != ""
        self._wire.roundtrip()  # the toplevels that exist now, with their state
        self._settle()

    @property
    def offered(self) -> list[str]:
        """Every interface the compositor offers (for `kronii doctor`)."""
        return sorted({item.interface for item in self._wire.globals.values()})

    def _bind_idle(self) -> str:
        """Idle notifications on each of the person's seats; which protocol, or "" when none."""
        named = seat_names(self._wire)
        self._seat_names = {seat: name for seat, name in named.items() if name != AGENT_SEAT}
        if self._watch_agent_seat:
            self._agent_seats = {seat: name for seat, name in named.items() if name == AGENT_SEAT}
        seats = [*self._seat_names, *self._agent_seats]
        if not self._seat_names:
            return ""
        notifier = self._wire.bind("ext_idle_notifier_v1", 1)
        kde = None if notifier is not None else self._wire.bind("org_kde_kwin_idle", 1)
        for seat in seats:
            if notifier is not None:
                notice = self._wire.new_object("ext_idle_notification_v1", self._idle_handler(seat))
                self._wire.request(notifier, 1, notice, self._idle_timeout_ms, seat)
            elif kde is not None:
                notice = self._wire.new_object("org_kde_kwin_idle_timeout", self._idle_handler(seat))
                self._wire.request(kde, 0, notice, seat, self._idle_timeout_ms)
        return (
            "ext_idle_notifier_v1" if notifier is not None else "org_kde_kwin_idle" if kde is not None else ""
        )

    # ---- events (the watcher's thread, or the constructor) ---------------------------------------

    def _on_manager(self, _object_id: int, opcode: int, args: list[object]) -> None:
        if opcode == 0:
            handle = int(args[0])  # type: ignore[call-overload]
            self._wire.set_handler(handle, self._on_handle)
            self._pending[handle] = Toplevel(handle)
        elif opcode == 1:
            self.error = "the compositor stopped listing windows"

    def _on_handle(self, handle: int, opcode: int, args: list[object]) -> None:
        current = self._pending.get(handle) or self._toplevels.get(handle) or Toplevel(handle)
        if opcode == 0:
            self._pending[handle] = replace(current, title=str(args[0]))
        elif opcode == 1:
            self._pending[handle] = replace(current, app_id=str(args[0]))
        elif opcode == 4:
            raw = bytes(args[0])  # type: ignore[call-overload]
            states = {int.from_bytes(raw[i : i + 4], "little") for i in range(0, len(raw) - 3, 4)}
            self._pending[handle] = replace(
                current, activated=_ACTIVATED in states, minimized=_MINIMIZED in states
            )
        elif opcode == 5:  # done: the pending state is whole
            self._toplevels[handle] = self._pending.pop(handle, current)
        elif opcode == 6:  # closed
            self._pending.pop(handle, None)
            self._toplevels.pop(handle, None)
            self._wire.request(handle, 7)  # destroy
            self._wire.forget(handle)

    def _idle_handler(self, seat: int) -> Callable[[int, int, list[object]], None]:
        def handle(_object_id: int, opcode: int, _args: list[object]) -> None:
            now = self._clock()
            if seat in self._agent_seats:  # not the person's: only reported, never their idle time
                if opcode != 0 and self._on_input is not None:
                    self._on_input(AGENT_SEAT, now)
                return
            with self._lock:
                if opcode == 0:  # idle: the seat's last input was a timeout ago
                    self._idle_seats[seat] = now - self._idle_timeout_ms / 1000
                else:  # resumed
                    self._idle_seats.pop(seat, None)
            if opcode != 0 and self._on_input is not None:
                self._on_input(self._seat_names.get(seat, ""), now)

        return handle

    def _settle(self) -> None:
        """After a read: which toplevel is activated now; tell the callback when that changed."""
        activated = [item for item in self._toplevels.values() if item.activated]
        # Two seats (the person's and the broker's) may each have a window activated: the one the person
        # was in stays the focus while it is still activated; a newly activated one is taken otherwise.
        current = self._focused
        kept = next(
            (item for item in activated if current is not None and item.handle == current.handle), None
        )
        active = kept or (activated[-1] if activated else None)
        with self._lock:
            changed = active != self._focused
            self._focused = active
            callback = self._on_focus
        if changed and callback is not None:
            callback(active)

    # ---- the caller's side ---------------------------------------------------------------------

    def focused(self) -> Toplevel | None:
        with self._lock:
            return self._focused

    def toplevels(self) -> list[Toplevel]:
        with self._lock:
            return list(self._toplevels.values())

    def idle_ms(self) -> int:
        """Milliseconds since the person's last input on any of their seats, to within the idle timeout
        (0 while input is recent, or before the first idle notice)."""
        with self._lock:
            if len(self._idle_seats) < len(self._seat_names) or not self._idle_seats:
                return 0
            since = max(self._idle_seats.values())
        return max(0, round((self._clock() - since) * 1000))

    def start(self, on_focus: Callable[[Toplevel | None], None]) -> None:
        """Read events on a thread of its own; `on_focus` runs there at each change of the focused
        window (and once now with the current one)."""
        with self._lock:
            self._on_focus = on_focus
            current = self._focused
        on_focus(current)
        self._thread = threading.Thread(target=self._run, name="kronii-wayland", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import select

        try:
            while True:
                ready, _, _ = select.select([self._wire.fileno(), self._stop_read], [], [])
                if self._stop_read in ready:
                    return
                self._wire.read(0)
                self._wire.dispatch()
                self._settle()
        except WaylandError as error:
            self.error = str(error)
            with self._lock:
                callback = self._on_focus
            if callback is not None:
                callback(None)

    @property
    def alive(self) -> bool:
        return not self.error

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self._stop_write, b"x")
        if self._thread is not None:
            self._thread.join(timeout=1.0)
        self._wire.close()
        for fd in (self._stop_read, self._stop_write):
            with contextlib.suppress(OSError):
                os.close(fd)


def seat_names(wire: WaylandConnection) -> dict[int, str]:
    """Bind every seat the compositor offers and learn its name: {object id: name}."""
    names: dict[int, str] = {}

    def on_seat(object_id: int, opcode: int, args: list[object]) -> None:
        if opcode == 1:
            names[object_id] = str(args[0])

    for offered in [item for item in wire.globals.values() if item.interface == "wl_seat"]:
        seat = wire.new_object("wl_seat", on_seat)
        wire.request(2, 0, offered.name, "wl_seat", min(2, offered.version), seat)
        names.setdefault(seat, "")
    wire.roundtrip()
    return names
