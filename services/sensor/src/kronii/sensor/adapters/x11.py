"""X11 adapter: idle time (MIT-SCREEN-SAVER) and the focused window (EWMH), event-driven.

Two X connections: one for the caller's queries (`idle_ms`, `focused`) and one owned by the watcher
thread, because python-xlib connections must not be shared between threads that both block on them.

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
from kronii.sensor.core.model import Focus
from kronii.sensor.core.prompts import WindowFacts, prompt_kind
from kronii.sensor.ports import DisplayUnavailable, IdleUnavailable
from Xlib import X, Xatom
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


# ---- /proc parsing (pure) -----------------------------------------------------------------------


# ---- reading the focused window -----------------------------------------------------------------


def _decode_text(raw: bytes, utf8: bool) -> str:
    if utf8:
        return raw.decode("utf-8", errors="replace")
    # ICCCM says STRING is Latin-1, yet many clients (xdotool among them) store UTF-8 there. Valid
    # UTF-8 that is not ASCII is very unlikely to be intended Latin-1, so try UTF-8 first.
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _as_bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("latin-1", errors="replace")
    return bytes(value)


class _FocusReader:
    """Reads EWMH/ICCCM properties over one connection. Raises Xlib errors; callers decide."""

    def __init__(self, dpy: Any, processes: ProcessReader) -> None:
        self._dpy = dpy
        self._processes = processes
        self.root = dpy.screen().root
        self.net_active_window = dpy.intern_atom("_NET_ACTIVE_WINDOW")
        self.net_wm_name = dpy.intern_atom("_NET_WM_NAME")
        self._net_wm_pid = dpy.intern_atom("_NET_WM_PID")
        self._net_wm_window_type = dpy.intern_atom("_NET_WM_WINDOW_TYPE")
        self._atom_names: dict[int, str] = {}
        self._utf8_string = dpy.intern_atom("UTF8_STRING")
        self.wm_name = Xatom.WM_NAME

    def active_window_id(self) -> int:
        prop = self.root.get_full_property(self.net_active_window, X.AnyPropertyType)
        if prop is None or len(prop.value) == 0:
            return 0
        return int(prop.value[0])

    def read(self, window_id: int) -> Focus:
        if window_id == 0:
            return Focus()
        window = self._dpy.create_resource_object("window", window_id)
        pid = 0
        pid_prop = window.get_full_property(self._net_wm_pid, X.AnyPropertyType)
        if pid_prop is not None and len(pid_prop.value) > 0:
            pid = int(pid_prop.value[0])
        instance, klass = window.get_wm_class() or ("", "")
        facts = WindowFacts(instance, klass, self._processes.program(pid), self._window_types(window))
        return Focus(
            app_name=klass,
            wm_class=f"{instance}.{klass}" if instance or klass else "",
            window_id=window_id,
            title=self._title(window),
            pid=pid,
            app_start_time_ms=self._processes.start_time_ms(pid),
            prompt=prompt_kind(facts),
        )

    def _window_types(self, window: Any) -> tuple[str, ...]:
        prop = window.get_full_property(self._net_wm_window_type, Xatom.ATOM)
        if prop is None:
            return ()
        names = []
        for atom in prop.value:
            if int(atom) not in self._atom_names:
                self._atom_names[int(atom)] = self._dpy.get_atom_name(int(atom))
            names.append(self._atom_names[int(atom)])
        return tuple(names)

    def _title(self, window: Any) -> str:
        net = window.get_full_property(self.net_wm_name, X.AnyPropertyType)
        if net is not None:
            # EWMH defines _NET_WM_NAME as UTF-8 whatever type the client tagged it with.
            return _decode_text(_as_bytes(net.value), utf8=True)
        legacy = window.get_full_property(self.wm_name, X.AnyPropertyType)
        if legacy is None:
            return ""
        return _decode_text(_as_bytes(legacy.value), utf8=legacy.property_type == self._utf8_string)


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
            self._reader = _FocusReader(self._dpy, self._processes)
        self._watcher: _Watcher | None = None
        self._closed = False

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
        """Whether idle_ms() can work: the server has MIT-SCREEN-SAVER."""
        return bool(self._dpy.has_extension(_SCREENSAVER_EXTENSION))

    def idle_ms(self) -> int:
        """Milliseconds since the last user input the X server saw.

        Raises IdleUnavailable without MIT-SCREEN-SAVER and DisplayUnavailable if the server is gone.
        """
        if not self.has_idle:
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
        self._watcher = _Watcher(self.display_name, self._processes, callback, self._count_error)
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
    ) -> None:
        self._callback = callback
        self._count_error = count_error
        self._dpy = _connect(display_name)
        self._dpy.set_error_handler(self._on_async_error)
        with _closing_on_failure(self._dpy, display_name):
            self._reader = _FocusReader(self._dpy, processes)
            # Select on the root before the thread starts, so no activation after start() is missed.
            self._reader.root.change_attributes(event_mask=X.PropertyChangeMask)
            self._dpy.sync()
        self._wake_r, self._wake_w = socket.socketpair()
        self._stopping = threading.Event()
        self._ready = threading.Event()
        self._watched = 0
        self._last: Focus | None = None
        self._thread = threading.Thread(target=self._run, name=f"x11-focus {display_name}", daemon=True)

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
                changed |= self._is_relevant(self._dpy.next_event())
            if changed:
                self._refresh()
                continue
            readable, _, _ = select.select([x_fd, self._wake_r], [], [])
            if self._wake_r in readable:
                return

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
