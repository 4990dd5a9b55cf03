"""The display's top-level windows, for naming a capture's target: the window manager's client list
(EWMH `_NET_CLIENT_LIST`), or, without a window manager, the mapped children of the root that carry
a WM_CLASS (one level down too, for reparenting managers that keep no list)."""

from __future__ import annotations

import os
from typing import Any

from kronii.capture.core.targets import WindowInfo

__all__ = ["DisplayUnavailable", "list_windows"]


class DisplayUnavailable(RuntimeError):
    """No X display to ask: DISPLAY unset, or the server refused."""


def _text(window: Any, display: Any, name: str) -> str:
    atom = display.intern_atom(name)
    prop = window.get_full_property(atom, 0)
    if prop is None or not prop.value:
        return ""
    value = prop.value
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _info(display: Any, window: Any) -> WindowInfo | None:
    from Xlib import X
    from Xlib.error import XError

    try:
        wm_class = window.get_wm_class()
        if not wm_class:
            return None
        pid_prop = window.get_full_property(display.intern_atom("_NET_WM_PID"), X.AnyPropertyType)
        pid = int(pid_prop.value[0]) if pid_prop is not None and len(pid_prop.value) else 0
        title = _text(window, display, "_NET_WM_NAME") or (window.get_wm_name() or "")
        return WindowInfo(window.id, pid, str(wm_class[1]), str(title))
    except XError:
        return None  # it went away while we looked


def _unmanaged(display: Any) -> list[Any]:
    from Xlib import X

    found: list[Any] = []
    for child in display.screen().root.query_tree().children:
        if child.get_attributes().map_state != X.IsViewable:
            continue
        found.append(child)
        found.extend(child.query_tree().children)  # a client inside its frame
    return found


def list_windows(display_name: str | None = None) -> list[WindowInfo]:
    """The windows a person can name, in the window manager's order (oldest first)."""
    from Xlib import display as xdisplay
    from Xlib.error import DisplayError

    name = display_name or os.environ.get("DISPLAY")
    if not name:
        raise DisplayUnavailable("DISPLAY is not set: there is no X display to look windows up on")
    try:
        display = xdisplay.Display(name)
    except (DisplayError, OSError) as error:
        raise DisplayUnavailable(f"cannot open the X display {name}: {error}") from None
    try:
        root = display.screen().root
        listed = root.get_full_property(display.intern_atom("_NET_CLIENT_LIST"), 0)
        candidates = (
            [display.create_resource_object("window", wid) for wid in listed.value]
            if listed is not None and len(listed.value)
            else _unmanaged(display)
        )
        infos = [_info(display, window) for window in candidates]
        return [info for info in infos if info is not None]
    finally:
        display.close()
