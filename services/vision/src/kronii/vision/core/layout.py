"""The accessibility tree placed on a Wayland compositor's layout.

On Wayland a toolkit does not know where its window is on the screen: GTK3 and GTK4 give AT-SPI
"screen" extents relative to their own surface (the window's own object at 0,0). The compositor knows
(sway's IPC: each window's rectangle in the layout, the coordinates wlr-screencopy regions and the
broker's absolute clicks use). Each application's objects are moved by where their window's surface
lies: its window found by the application's process id (a process with several windows: by title,
then by size), then every object under it shifted by the window's origin less the object's window's
own extents origin. A window the compositor does not list (closed meanwhile, another seat's layer)
leaves its objects' bounds unknown rather than wrong: a click is never sent to a guessed place."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from kronii.vision.core.context import Bounds, RawNode
from kronii.vision.core.front import WINDOW_ROLES, XDesk, XWindow

__all__ = ["place_on_layout", "window_for"]


def window_for(node: RawNode, desk: XDesk) -> XWindow | None:
    """The compositor's window for the accessible window `node`: its process's; among several, the one
    titled like it, else the one of its size."""
    own = [window for window in desk.stack if node.pid and window.pid == node.pid]
    if len(own) <= 1:
        return own[0] if own else None
    titled = [window for window in own if node.name and window.title == node.name]
    candidates = titled or own
    if len(candidates) > 1 and node.bounds is not None:
        size = (node.bounds.width, node.bounds.height)
        sized = [window for window in candidates if (window.area.width, window.area.height) == size]
        candidates = sized or candidates
    return candidates[0]


def _shifted(bounds: Bounds | None, dx: int, dy: int) -> Bounds | None:
    if bounds is None:
        return None
    return Bounds(bounds.x + dx, bounds.y + dy, bounds.width, bounds.height)


def place_on_layout(nodes: Sequence[RawNode], desk: XDesk) -> tuple[RawNode, ...]:
    """`nodes` (a walk, depth first) with every object's bounds in layout coordinates. An application
    object (depth 0) has none; each top-level window (a window role right under its application)
    sets the shift of everything read under it."""
    placed: list[RawNode] = []
    shift: tuple[int, int] | None = None
    window_depth = -1
    for node in nodes:
        if node.depth <= window_depth:
            shift, window_depth = None, -1
        if shift is None and node.role in WINDOW_ROLES and node.depth >= 1:
            window = window_for(node, desk)
            own = node.bounds or Bounds(0, 0, 0, 0)
            shift = None if window is None else (window.area.x - own.x, window.area.y - own.y)
            window_depth = node.depth
        if shift is None:
            placed.append(replace(node, bounds=None) if node.bounds is not None else node)
        else:
            placed.append(replace(node, bounds=_shifted(node.bounds, *shift)))
    return tuple(placed)
