"""The X server's windows as plain data (`core.front.XDesk`): the input focus walked up to its top-level
client window, _NET_ACTIVE_WINDOW, and the mapped top-level windows bottom to top, each with its
process (_NET_WM_PID), title, WM_CLASS, rectangle in root pixels, whether it is a notification
(_NET_WM_WINDOW_TYPE_NOTIFICATION) or override-redirect, and whether its process is kronii's.

A client window is the one holding WM_STATE (the window manager's frame holds the client); an
override-redirect window (a menu, a notification bubble) has no frame and is its own client. Windows
may close while they are read: such a window is left out, never an error. The focus window's toolkit
is named from the libraries its process has loaded (/proc/PID/maps), so a window whose tree is not on
the accessibility bus can be told what it needs."""

from __future__ import annotations

import contextlib
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from kronii.vision.core.context import Bounds
from kronii.vision.core.front import XDesk, XWindow
from Xlib import X
from Xlib import display as xdisplay
from Xlib import error as xerror

__all__ = ["XWindows", "XWindowsError"]

# Library names (as in /proc/PID/maps) by the toolkit they reveal; the first match decides.
_TOOLKIT_LIBRARIES = (
    ("electron", ("libnode.so", "electron")),
    ("chromium", ("libcef.so", "/chromium/", "/chrome/", "libchrome")),
    ("qt", ("libQt5Core", "libQt6Core", "libQtCore")),
    ("java", ("libjvm.so",)),
    ("tk", ("libtk8",)),
    ("gtk", ("libgtk-3.so", "libgtk-4.so", "libgtk-x11-2.0.so")),
)
_GONE = (xerror.BadWindow, xerror.BadDrawable, xerror.BadMatch, xerror.BadValue)


class XWindowsError(RuntimeError):
    """The X server could not be read: `str()` says why."""


def _proc_text(pid: int, name: str) -> str:
    try:
        return Path(f"/proc/{pid}/{name}").read_text(errors="replace")
    except OSError:
        return ""


def _executable(pid: int) -> str:
    try:
        return os.path.basename(os.readlink(f"/proc/{pid}/exe"))
    except OSError:
        return _proc_text(pid, "comm").strip()


def _is_kronii(pid: int) -> bool:
    """A kronii process: its command line runs `kronii` or a `kronii.*` module."""
    if pid == os.getpid():
        return True
    args = [a for a in _proc_text(pid, "cmdline").split("\0") if a]
    return any(os.path.basename(a) == "kronii" or a.startswith("kronii.") for a in args[:4])


def toolkit_of(pid: int) -> str:
    maps = _proc_text(pid, "maps") if pid > 0 else ""
    for toolkit, marks in _TOOLKIT_LIBRARIES:
        if any(mark in maps for mark in marks):
            return toolkit
    return ""


class XWindows:
    """One X connection reading `XDesk`s; used from one thread at a time (the caller holds a lock)."""

    def __init__(self, display: str | None) -> None:
        shown = display if display is not None else os.environ.get("DISPLAY")
        if not shown:
            raise XWindowsError("no X display to read the windows from: DISPLAY is not set")
        try:
            self._dpy = xdisplay.Display(shown)
        except (xerror.DisplayError, xerror.ConnectionClosedError, OSError) as error:
            raise XWindowsError(f"cannot reach the X display {shown!r} ({error})") from None
        self._root = self._dpy.screen().root
        self._atoms: dict[str, int] = {}
        # The window manager's client windows (_NET_CLIENT_LIST), read once per look: a set lookup
        # instead of a WM_STATE request for every window of every frame.
        self._clients: set[int] = set()
        # What /proc says of a process (its executable, whether it is kronii's, its toolkit) holds for
        # its life: read once per pid while it has a window.
        self._processes: dict[int, tuple[str, bool]] = {}
        self._toolkits: dict[int, str] = {}

    def _atom(self, name: str) -> int:
        if name not in self._atoms:
            self._atoms[name] = int(self._dpy.intern_atom(name))
        return self._atoms[name]

    def desk(self) -> XDesk:
        try:
            return self._desk()
        except (xerror.ConnectionClosedError, OSError) as error:
            raise XWindowsError(f"the X display went away while reading its windows ({error})") from None

    def _desk(self) -> XDesk:
        listed = self._root.get_full_property(self._atom("_NET_CLIENT_LIST"), X.AnyPropertyType)
        self._clients = {int(w) for w in listed.value} if listed is not None else set()
        stack: list[XWindow] = []
        for child in self._root.query_tree().children:
            with contextlib.suppress(*_GONE):
                window = self._top_level(child)
                if window is not None:
                    stack.append(window)
        focus = self._focus_client()
        active = self._cardinal(self._root, "_NET_ACTIVE_WINDOW")
        self._forget_all_but({w.pid for w in stack})
        known = {w.window_id for w in stack}
        stack = [self._with_toolkit(w) if w.window_id == focus else w for w in stack]
        return XDesk(focus if focus in known else 0, active if active in known else 0, tuple(stack))

    def _forget_all_but(self, alive: set[int]) -> None:
        self._processes = {pid: facts for pid, facts in self._processes.items() if pid in alive}
        self._toolkits = {pid: kit for pid, kit in self._toolkits.items() if pid in alive}

    def _with_toolkit(self, window: XWindow) -> XWindow:
        """The window with its process's toolkit named (read for the window in front only)."""
        if not window.pid:
            return window
        if window.pid not in self._toolkits:
            self._toolkits[window.pid] = toolkit_of(window.pid)
        return replace(window, toolkit=self._toolkits[window.pid])

    def _is_client(self, window: Any) -> bool:
        if self._clients:
            return int(window.id) in self._clients
        return window.get_full_property(self._atom("WM_STATE"), X.AnyPropertyType) is not None

    def _cardinal(self, window: Any, name: str) -> int:
        prop = window.get_full_property(self._atom(name), X.AnyPropertyType)
        return int(prop.value[0]) if prop is not None and len(prop.value) else 0

    def _client(self, window: Any, depth: int = 0) -> Any | None:
        """`window` itself when it is a client window, else the nearest descendant that is (a
        reparenting window manager's frame holds its client one or two levels down)."""
        if self._is_client(window):
            return window
        if depth >= 2:
            return None
        children = window.query_tree().children
        direct = next((child for child in children if self._is_client(child)), None)
        if direct is not None:
            return direct
        for child in children:
            found = self._client(child, depth + 1)
            if found is not None:
                return found
        return None

    def _focus_client(self) -> int:
        """The top-level client window holding the X input focus (0: none, or the root)."""
        focus = self._dpy.get_input_focus().focus
        if isinstance(focus, int) or focus is None:
            return 0  # None or PointerRoot
        with contextlib.suppress(*_GONE):
            window = focus
            while window is not None and window.id != self._root.id:
                if self._is_client(window):
                    return int(window.id)
                parent = window.query_tree().parent
                if parent is None or isinstance(parent, int) or parent.id == self._root.id:
                    client = self._client(window)  # the focus is on a frame: its client inside
                    return int(client.id) if client is not None else int(window.id)
                window = parent
        return 0

    def _top_level(self, child: Any) -> XWindow | None:
        attributes = child.get_attributes()
        if attributes.map_state != X.IsViewable:
            return None
        override = bool(attributes.override_redirect)
        client = child if override else self._client(child)
        if client is None:
            return None
        pid = self._cardinal(client, "_NET_WM_PID")
        if pid and pid not in self._processes:
            self._processes[pid] = (_executable(pid), _is_kronii(pid))
        executable, kronii = self._processes.get(pid, ("", False))
        wm_class = client.get_wm_class()
        types = client.get_full_property(self._atom("_NET_WM_WINDOW_TYPE"), X.AnyPropertyType)
        kind = self._atom("_NET_WM_WINDOW_TYPE_NOTIFICATION")
        notification = types is not None and kind in list(types.value)
        owner = client.get_wm_transient_for()
        return XWindow(
            window_id=int(client.id), pid=pid, title=self._title(client),
            wm_class=wm_class[1] if wm_class else "", area=self._area(client),
            executable=executable, notification=notification, override_redirect=override, kronii=kronii,
            transient_for=int(owner.id) if owner is not None and not isinstance(owner, int) else 0,
        )  # fmt: skip

    def _title(self, window: Any) -> str:
        name = window.get_full_property(self._atom("_NET_WM_NAME"), self._atom("UTF8_STRING"))
        if name is not None and name.value:
            value = name.value
            return value.decode(errors="replace") if isinstance(value, bytes) else str(value)
        legacy = window.get_wm_name()
        if isinstance(legacy, bytes):
            return legacy.decode("latin-1")
        return str(legacy or "")

    def _area(self, window: Any) -> Bounds:
        size = window.get_geometry()
        origin = self._root.translate_coords(window, 0, 0)
        return Bounds(int(origin.x), int(origin.y), int(size.width), int(size.height))

    def close(self) -> None:
        with contextlib.suppress(xerror.ConnectionClosedError, OSError):
            self._dpy.close()
