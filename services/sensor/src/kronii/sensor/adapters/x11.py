"""X11 adapter: idle time and the focused window (EWMH), both event-driven.

Idle time comes from the SYNC extension's IDLETIME counter: alarms the watcher thread arms tell when
the person goes still and when input comes back (adapters/x11_sync.py), so `idle_ms()` is answered
from memory. A server without SYNC's IDLETIME is asked through MIT-SCREEN-SAVER at each call instead.

Two X connections: one for the caller's queries (`idle_ms` without alarms, `focused`) and one owned by
the watcher thread, because python-xlib connections must not be shared between threads that both
block on them.

`Focus` fields as this adapter fills them:

- `window_id`: the client window id from the root's `_NET_ACTIVE_WINDOW`.
- `app_name`: the class part of `WM_CLASS` (e.g. "XTerm", "firefox").
- `wm_class`: "instance.Class" (e.g. "xterm.XTerm"), the form `wmctrl -lx` prints.
- `title`: `_NET_WM_NAME`, falling back to `WM_NAME`; raw, the caller redacts it.
- `pid`: `_NET_WM_PID`, 0 when the client does not set it.
- `app_start_time_ms`: start time of that pid in epoch ms from /proc; with `pid` it tells a reused
  pid from the original process. 0 when unknown.
- `prompt`: the kind of prompt the window is (core.prompts, from WM_CLASS, the pid's argv[0] and
  `_NET_WM_WINDOW_TYPE`), "" for an app window.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

from kronii.sensor.adapters.processes import ProcessReader, parse_boot_time, parse_start_ticks, start_time_ms
from kronii.sensor.adapters.x11_sync import IdleAlarms, IdleKnown
from kronii.sensor.adapters.x11_windows import FocusReader
from kronii.sensor.core.model import Focus
from kronii.sensor.ports import DisplayUnavailable, IdleUnavailable
from Xlib import X
from Xlib import display as xdisplay
from Xlib import error as xerror

__all__ = [
    "DisplayUnavailable",
    "IdleUnavailable",
    "X11Display",
    "parse_boot_time",
    "parse_start_ticks",
    "start_time_ms",
]

log = logging.getLogger(__name__)

_SCREENSAVER_EXTENSION = "MIT-SCREEN-SAVER"
# How long start() waits for the watcher to select events on the active window and report it.
_WATCHER_READY_TIMEOUT_S = 2.0
_STOP_TIMEOUT_S = 1.0
# Still this long is "quiet" for the idle alarms: the idle time is known to within it, as a poll
# every second knew it.
IDLE_QUIET_MS = 1000


def _connect(name: str | None) -> Any:
    shown = name if name is not None else os.environ.get("DISPLAY")
    if not shown:
        raise DisplayUnavailable("no X display: DISPLAY is not set and no display name was given")
    try:
        return xdisplay.Display(shown)
    except xerror.DisplayNameError as exc:
        raise DisplayUnavailable(f"no X display: {shown!r} is not a valid display name") from exc
    except xerror.DisplayConnectionError as exc:
        raise DisplayUnavailable(f"no X display: cannot connect to {shown!r}: {exc.msg}") from exc
    except (xerror.DisplayError, xerror.ConnectionClosedError, OSError) as exc:
        raise DisplayUnavailable(f"no X display: cannot connect to {shown!r}: {exc}") from exc


@contextlib.contextmanager
def _closing_on_failure(dpy: Any, display_name: str) -> Iterator[None]:
    """Close a fresh connection if setting it up fails, reporting a server that went away meanwhile."""
    try:
        yield
    except (xerror.ConnectionClosedError, OSError) as exc:
        with contextlib.suppress(xerror.ConnectionClosedError, OSError):
            dpy.close()
        raise DisplayUnavailable(f"lost the X display {display_name} while setting up: {exc}") from exc
    except BaseException:
        with contextlib.suppress(xerror.ConnectionClosedError, OSError):
            dpy.close()
        raise


# ---- the adapter --------------------------------------------------------------------------------


class X11Display:
    """Idle time and focused window of one X display, plus a watcher thread for focus changes.

    `X11Display(name)` raises DisplayUnavailable; `X11Display.open(name)` returns None instead, for
    callers that run on without a display. `name=None` means $DISPLAY.
    """

    def __init__(self, display: str | None = None, *, proc_root: Path = Path("/proc")) -> None:
        self._dpy = _connect(display)
        self.display_name: str = self._dpy.get_display_name()
        self.problem = ""
        self._processes = ProcessReader(proc_root)
        self._errors = 0
        self._errors_lock = threading.Lock()
        self._query_lock = threading.Lock()
        self._dpy.set_error_handler(self._on_async_error)
        with _closing_on_failure(self._dpy, self.display_name):
            self._reader = FocusReader(self._dpy, self._processes)
        self._watcher: _Watcher | None = None
        self._closed = False
        self._idle = IdleKnown(IDLE_QUIET_MS)
        self._on_idle: Callable[[int], None] | None = None

    @classmethod
    def open(cls, display: str | None = None, *, proc_root: Path = Path("/proc")) -> X11Display | None:
        """The display, or None (logged once at info) when there is none to connect to."""
        try:
            return cls(display, proc_root=proc_root)
        except DisplayUnavailable as exc:
            log.info("%s; running without X11 focus and idle time", exc)
            return None

    # ---- metrics ----

    @property
    def errors(self) -> int:
        """X errors seen so far (vanished windows, protocol errors, lost connections)."""
        with self._errors_lock:
            return self._errors

    def _count_error(self) -> None:
        with self._errors_lock:
            self._errors += 1

    def _on_async_error(self, err: Any, request: Any) -> None:
        # Without a handler python-xlib prints errors of reply-less requests to stderr.
        self._count_error()
        log.debug("X error on %s: %s", self.display_name, err)

    # ---- queries on the caller's connection ----

    @property
    def has_idle(self) -> bool:
        """Whether idle_ms() can work: the server has MIT-SCREEN-SAVER, or SYNC's alarms are watched."""
        return self._on_idle is not None or bool(self._dpy.has_extension(_SCREENSAVER_EXTENSION))

    def watch_idle(self, on_idle: Callable[[int], None]) -> bool:
        """Follow the idle time through SYNC IDLETIME alarms from start() on: `idle_ms()` is then
        answered from memory, and `on_idle(idle_ms)` runs on the watcher's thread when input comes
        back after a quiet second. False (nothing changes) when the server has no IDLETIME."""
        with self._query_lock:
            try:
                alarms = IdleAlarms.create(self._dpy)
            except xerror.XError as exc:
                log.debug("SYNC did not answer on %s: %s", self.display_name, exc)
                alarms = None
        if alarms is None:
            return False
        self._on_idle = on_idle
        return True

    def idle_ms(self) -> int:
        """Milliseconds since the last user input the X server saw.

        Raises IdleUnavailable without MIT-SCREEN-SAVER and DisplayUnavailable if the server is gone.
        """
        if self._on_idle is not None and self._watcher is not None:
            if not self._watcher.alive:
                raise DisplayUnavailable(f"lost the X display {self.display_name}: its watcher ended")
            known = self._idle.idle_ms()
            if known is not None:
                return known
        if not self._dpy.has_extension(_SCREENSAVER_EXTENSION):
            raise IdleUnavailable(
                f"X display {self.display_name} has no {_SCREENSAVER_EXTENSION} extension; idle time is unknown"
            )
        with self._query_lock:
            try:
                return int(self._reader.root.screensaver_query_info().idle)
            except (xerror.ConnectionClosedError, OSError) as exc:
                self._count_error()
                raise DisplayUnavailable(f"lost the X display {self.display_name}: {exc}") from exc

    def focused(self) -> Focus:
        """The focused window now; an empty Focus if none is active or it vanished while being read.

        Raises DisplayUnavailable if the server is gone.
        """
        with self._query_lock:
            try:
                return self._reader.read(self._reader.active_window_id())
            except xerror.XError as exc:
                self._count_error()
                log.debug("focused window vanished while reading it: %s", exc)
                return Focus()
            except (xerror.ConnectionClosedError, OSError) as exc:
                self._count_error()
                raise DisplayUnavailable(f"lost the X display {self.display_name}: {exc}") from exc

    # ---- the watcher ----

    @property
    def watching(self) -> bool:
        return self._watcher is not None and self._watcher.alive

    def start(self, callback: Callable[[Focus], None]) -> None:
        """Call `callback(focus)` from a dedicated thread whenever the active window or its title
        changes, starting with the current focus before this returns.

        Consecutive identical reports are dropped: a title change usually rewrites both WM_NAME and
        _NET_WM_NAME, and window managers rewrite _NET_ACTIVE_WINDOW with the same value. The callback
        must be quick; stop() waits for it at most 1 s. Raises DisplayUnavailable if the watcher
        cannot open its own connection.
        """
        if self._closed:
            raise RuntimeError("X11Display is closed")
        if self._watcher is not None and self._watcher.alive:
            raise RuntimeError("the focus watcher is already running")
        # A watcher that ended by itself (lost display) still holds its wakeup sockets.
        self.stop()
        idle = (self._idle, self._on_idle) if self._on_idle is not None else None
        self._watcher = _Watcher(self.display_name, self._processes, callback, self._count_error, idle)
        self._watcher.start()

    def stop(self) -> None:
        """Stop the watcher thread and close its connection; returns within about 1 s."""
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.stop()

    def close(self) -> None:
        self.stop()
        if self._closed:
            return
        self._closed = True
        with self._query_lock:
            try:
                self._dpy.close()
            except (xerror.ConnectionClosedError, OSError):
                pass

    def __enter__(self) -> X11Display:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class _Watcher:
    """The focus-watching thread and the connection it alone uses."""

    def __init__(
        self,
        display_name: str,
        processes: ProcessReader,
        callback: Callable[[Focus], None],
        count_error: Callable[[], None],
        idle: tuple[IdleKnown, Callable[[int], None]] | None = None,
    ) -> None:
        self._callback = callback
        self._count_error = count_error
        self._dpy = _connect(display_name)
        self._dpy.set_error_handler(self._on_async_error)
        self._alarms: IdleAlarms | None = None
        self._idle = idle
        with _closing_on_failure(self._dpy, display_name):
            self._reader = FocusReader(self._dpy, processes)
            # Select on the root before the thread starts, so no activation after start() is missed.
            self._reader.root.change_attributes(event_mask=X.PropertyChangeMask)
            if idle is not None:
                self._arm_idle(idle[0])
            self._dpy.sync()
        self._wake_r, self._wake_w = socket.socketpair()
        self._stopping = threading.Event()
        self._ready = threading.Event()
        self._watched = 0
        self._last: Focus | None = None
        self._thread = threading.Thread(target=self._run, name=f"x11-focus {display_name}", daemon=True)

    def _arm_idle(self, known: IdleKnown) -> None:
        self._alarms = IdleAlarms.create(self._dpy)
        if self._alarms is None:
            return
        self._alarms.arm([known.quiet_ms], returns_below_ms=known.returns_below_ms)
        known.begin(self._alarms.idle_ms())

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def start(self) -> None:
        self._thread.start()
        if not self._ready.wait(_WATCHER_READY_TIMEOUT_S):
            log.warning(
                "X11 focus watcher did not report the initial focus within %ss", _WATCHER_READY_TIMEOUT_S
            )

    def stop(self) -> None:
        self._stopping.set()
        try:
            self._wake_w.send(b"\0")
        except OSError:
            pass
        self._thread.join(_STOP_TIMEOUT_S)
        if self._thread.is_alive():
            # Still inside the callback; it is a daemon thread and exits once the callback returns.
            log.warning("X11 focus watcher still busy in its callback after %ss; leaving it", _STOP_TIMEOUT_S)
            return
        self._wake_r.close()
        self._wake_w.close()

    def _on_async_error(self, err: Any, request: Any) -> None:
        self._count_error()
        log.debug("X error in the focus watcher: %s", err)

    def _run(self) -> None:
        try:
            self._refresh()
            self._ready.set()
            self._loop()
        except (xerror.ConnectionClosedError, OSError) as exc:
            self._count_error()
            if not self._stopping.is_set():
                log.warning("X11 focus watcher lost the display: %s", exc)
        except Exception:
            self._count_error()
            log.exception("X11 focus watcher failed")
        finally:
            self._ready.set()
            try:
                self._dpy.close()
            except (xerror.ConnectionClosedError, OSError):
                pass

    def _loop(self) -> None:
        x_fd = self._dpy.fileno()
        while not self._stopping.is_set():
            # Flushing also reads whatever the server sent, and requests made while refreshing read
            # their replies the same way: either can move events from the socket into python-xlib's
            # queue, where select() cannot see them. So flush first, then drain, then block.
            self._dpy.flush()
            changed = False
            while self._dpy.pending_events():
                event = self._dpy.next_event()
                changed |= not self._took_idle(event) and self._is_relevant(event)
            if changed:
                self._refresh()
                continue
            readable, _, _ = select.select([x_fd, self._wake_r], [], [])
            if self._wake_r in readable:
                return

    def _took_idle(self, event: Any) -> bool:
        """Whether the event was an idle alarm's (it is then taken: known, and told on a return)."""
        if self._alarms is None or self._idle is None:
            return False
        crossing = self._alarms.crossing(event)
        if crossing is None:
            return False
        known, on_idle = self._idle
        known.take(crossing)
        if not crossing.rising:
            try:
                on_idle(crossing.idle_ms)
            except Exception:
                log.exception("idle callback failed")
        return True

    def _is_relevant(self, event: Any) -> bool:
        # A window manager may leave _NET_ACTIVE_WINDOW naming a window that was destroyed (openbox
        # does when nothing else takes the focus): its destruction is then the only news.
        if event.type == X.DestroyNotify:
            return int(event.window.id) == self._watched
        if event.type != X.PropertyNotify:
            return False
        window_id = int(event.window.id)
        if window_id == self._reader.root.id:
            return bool(event.atom == self._reader.net_active_window)
        return window_id == self._watched and event.atom in (self._reader.net_wm_name, self._reader.wm_name)

    def _refresh(self) -> None:
        try:
            active = self._reader.active_window_id()
            if active != self._watched:
                self._follow(active)
            focus = self._reader.read(active)
        except xerror.XError as exc:
            self._count_error()
            log.debug("focused window vanished while reading it: %s", exc)
            focus = Focus()
        if focus == self._last:
            return
        self._last = focus
        try:
            self._callback(focus)
        except Exception:
            log.exception("focus callback failed")

    def _follow(self, active: int) -> None:
        """Move the PropertyChangeMask selection from the previously active window to `active`."""
        # Errors here are expected (the old window is often already destroyed) and a vanished new
        # window shows up when its properties are read, so neither is counted.
        if self._watched:
            old = self._dpy.create_resource_object("window", self._watched)
            old.change_attributes(event_mask=X.NoEventMask, onerror=xerror.CatchError(xerror.BadWindow))
        if active:
            new = self._dpy.create_resource_object("window", active)
            new.change_attributes(
                event_mask=X.PropertyChangeMask | X.StructureNotifyMask,
                onerror=xerror.CatchError(xerror.BadWindow),
            )
        self._watched = active
