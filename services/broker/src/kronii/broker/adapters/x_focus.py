"""Which window the person has in front of them: the window manager's active window, else the X
input focus. A grant that names no window pins the agent's keys to this one."""

from __future__ import annotations

from Xlib import X
from Xlib import display as xdisplay
from Xlib import error as xerror

__all__ = ["FocusUnknown", "focused_window"]


class FocusUnknown(OSError):
    """The display cannot be opened; the message says which and why."""


def focused_window(display_name: str) -> int:
    """The focused top-level window's id, or 0 when no window has the focus."""
    try:
        display = xdisplay.Display(display_name or None)
    except (xerror.DisplayError, OSError) as error:
        raise FocusUnknown(f"cannot open the display {display_name or '$DISPLAY'} ({error})") from None
    try:
        root = display.screen().root
        active = root.get_full_property(display.intern_atom("_NET_ACTIVE_WINDOW"), X.AnyPropertyType)
        if active is not None and len(active.value) and int(active.value[0]) > 0:
            return int(active.value[0])
        focus = display.get_input_focus().focus
        window = focus if isinstance(focus, int) else int(focus.id)
        return window if window > 1 and window != root.id else 0  # 0 is None, 1 PointerRoot
    finally:
        display.close()
