"""The focused window's rectangle from sway's own IPC (kronii.desktop.sway_ipc: i3-ipc in the standard
library).

Wayland tells a client nothing about other clients' windows, so the rectangle to capture comes from the
compositor: sway answers GET_TREE on the socket SWAYSOCK names with its whole layout as JSON, and the
node marked `focused` is the window the person is in. sway's IPC errors leave as CaptureUnavailable.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kronii.capture.core.frames import Geometry
from kronii.capture.ports import CaptureUnavailable, WindowGone
from kronii.desktop.sway_ipc import GET_TREE, SwayIpcError, request

__all__ = ["focused_rect", "get_tree"]

_WINDOW_TYPES = ("con", "floating_con")


def get_tree(path: Path, *, timeout_s: float = 5.0) -> dict[str, Any]:
    """sway's layout tree, as GET_TREE returns it."""
    try:
        tree = request(path, GET_TREE, timeout_s=timeout_s)
    except SwayIpcError as error:
        raise CaptureUnavailable(str(error)) from None
    if not isinstance(tree, dict):
        raise CaptureUnavailable("sway's IPC socket sent a tree that is not a JSON object")
    return tree


def _focused(node: dict[str, Any]) -> dict[str, Any] | None:
    if node.get("focused"):
        return node
    for child in [*node.get("nodes", []), *node.get("floating_nodes", [])]:
        found = _focused(child)
        if found is not None:
            return found
    return None


def focused_rect(tree: dict[str, Any]) -> Geometry:
    """The focused window's rectangle in the layout; WindowGone when the focus is on no window (an
    empty workspace)."""
    node = _focused(tree)
    if node is None or node.get("type") not in _WINDOW_TYPES:
        raise WindowGone("sway says no window is focused")
    rect = node.get("rect") or {}
    x, y = int(rect.get("x", 0)), int(rect.get("y", 0))
    width, height = int(rect.get("width", 0)), int(rect.get("height", 0))
    if width < 8 or height < 8:
        raise WindowGone(f"sway's focused window is {width}x{height}: nothing to capture")
    return (x, y, width, height)
