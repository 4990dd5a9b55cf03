"""The focused window's rectangle from sway's own IPC (the i3-ipc protocol), in the standard library.

Wayland tells a client nothing about other clients' windows, so the rectangle to capture comes from the
compositor: sway answers GET_TREE on the socket SWAYSOCK names with its whole layout as JSON, and the
node marked `focused` is the window the person is in. A message is the magic "i3-ipc", the payload's
length and the message type (both native-endian u32), then the payload; the reply has the same shape.
"""

from __future__ import annotations

import json
import socket
import struct
from pathlib import Path
from typing import Any

from kronii.capture.core.frames import Geometry
from kronii.capture.ports import CaptureUnavailable, WindowGone

__all__ = ["focused_rect", "get_tree"]

_MAGIC = b"i3-ipc"
_HEADER = struct.Struct("=II")
_GET_TREE = 4
_WINDOW_TYPES = ("con", "floating_con")


def _read_exactly(connection: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = connection.recv(size - len(data))
        if not chunk:
            raise CaptureUnavailable("sway closed its IPC socket in the middle of a reply")
        data += chunk
    return bytes(data)


def get_tree(path: Path, *, timeout_s: float = 5.0) -> dict[str, Any]:
    """sway's layout tree, as GET_TREE returns it."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC) as connection:
            connection.settimeout(timeout_s)
            connection.connect(str(path))
            connection.sendall(_MAGIC + _HEADER.pack(0, _GET_TREE))
            header = _read_exactly(connection, len(_MAGIC) + _HEADER.size)
            if not header.startswith(_MAGIC):
                raise CaptureUnavailable("sway's IPC socket answered something that is not i3-ipc")
            length, _kind = _HEADER.unpack_from(header, len(_MAGIC))
            payload = _read_exactly(connection, length)
    except OSError as error:
        raise CaptureUnavailable(f"sway's IPC socket does not answer: {error.strerror or error}") from None
    try:
        tree = json.loads(payload)
    except ValueError:
        raise CaptureUnavailable("sway's IPC socket sent a tree that is not JSON") from None
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
    geometry = (
        int(rect.get("x", 0)),
        int(rect.get("y", 0)),
        int(rect.get("width", 0)),
        int(rect.get("height", 0)),
    )
    if geometry[2] < 8 or geometry[3] < 8:
        raise WindowGone(f"sway's focused window is {geometry[2]}x{geometry[3]}: nothing to capture")
    return geometry
