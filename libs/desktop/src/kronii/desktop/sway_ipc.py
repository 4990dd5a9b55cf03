"""sway's own IPC (the i3-ipc protocol), in the standard library: what Wayland's protocols do not say.

Wayland tells a client nothing of other clients' windows and offers no way to make a seat; sway's IPC does
both: GET_TREE is its whole layout as JSON (each window's rectangle, which one is focused), RUN_COMMAND runs
a sway command (`seat kronii-agent fallback false` makes the broker's own seat). A message is the magic
"i3-ipc", the payload's length and the message type (both native-endian u32), then the payload; the reply
has the same shape. The socket is the one SWAYSOCK names.
"""

from __future__ import annotations

import json
import socket
import struct
from pathlib import Path
from typing import Any

__all__ = ["GET_SEATS", "GET_TREE", "RUN_COMMAND", "SwayIpcError", "request", "run_command", "sway_socket"]

RUN_COMMAND, GET_TREE, GET_SEATS = 0, 4, 101
_MAGIC = b"i3-ipc"
_HEADER = struct.Struct("=II")


class SwayIpcError(Exception):
    """sway's IPC socket is not there, did not answer, or answered what cannot be read; or a command failed."""


def sway_socket(env: dict[str, str] | Any) -> Path | None:
    """The IPC socket SWAYSOCK names, when it exists."""
    value = env.get("SWAYSOCK") if hasattr(env, "get") else None
    if not value:
        return None
    path = Path(value)
    return path if path.exists() else None


def _read_exactly(connection: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = connection.recv(size - len(data))
        if not chunk:
            raise SwayIpcError("sway closed its IPC socket in the middle of a reply")
        data += chunk
    return bytes(data)


def request(path: Path, kind: int, payload: str = "", *, timeout_s: float = 5.0) -> Any:
    """One request and its reply, decoded from JSON."""
    body = payload.encode()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC) as connection:
            connection.settimeout(timeout_s)
            connection.connect(str(path))
            connection.sendall(_MAGIC + _HEADER.pack(len(body), kind) + body)
            header = _read_exactly(connection, len(_MAGIC) + _HEADER.size)
            if not header.startswith(_MAGIC):
                raise SwayIpcError("sway's IPC socket answered something that is not i3-ipc")
            length, _kind = _HEADER.unpack_from(header, len(_MAGIC))
            reply = _read_exactly(connection, length)
    except OSError as error:
        raise SwayIpcError(f"sway's IPC socket does not answer: {error.strerror or error}") from None
    try:
        return json.loads(reply)
    except ValueError:
        raise SwayIpcError("sway's IPC socket sent a reply that is not JSON") from None


def run_command(path: Path, command: str) -> None:
    """Run a sway command; SwayIpcError with sway's own error when it failed."""
    replies = request(path, RUN_COMMAND, command)
    if not isinstance(replies, list) or not replies:
        raise SwayIpcError(f"sway gave no answer to {command!r}")
    for reply in replies:
        if not reply.get("success"):
            raise SwayIpcError(f"sway refused {command!r}: {reply.get('error', 'no reason given')}")
