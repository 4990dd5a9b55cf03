"""The broker's end of x11vnc's viewer hooks: a 0600 Unix socket in a 0700 directory.

``kronii.broker.cli.viewer_hook`` connects once per viewer event and writes one JSON line. The socket's
modes keep other users out; the kernel's peer credentials (SO_PEERCRED) are checked as well, so a
loosened directory still admits nobody but this uid. The network never reaches this socket: x11vnc
runs the hook after authenticating a viewer, and only the client id it assigned travels here.

The listener keeps the set of attached viewer ids and calls ``on_viewer`` only when that set goes
from empty to not empty or back: a second viewer, or one of two leaving, changes nothing for the
broker, which cares whether a person is watching, not how many.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path

from kronii.broker.adapters.private_socket import listen_private
from kronii.edge.local_door import peer_credentials

__all__ = ["OnViewer", "ViewerHookError", "ViewerHookListener", "hook_socket_path", "parse_event"]

log = logging.getLogger(__name__)

OnViewer = Callable[[bool, str], None]
"""on_viewer(attached, client_id): attached is whether any viewer is attached after the change."""

_MAX_LINE = 1024
_MAX_CLIENT_ID = 64
# The hook writes its line right after connecting; a peer that does not is dropped, not waited for.
_READ_DEADLINE_S = 2.0


class ViewerHookError(RuntimeError):
    """The socket cannot be set up safely; the message is a sentence without a path."""


def hook_socket_path(data_dir: Path) -> Path:
    """Where the broker listens for viewer hooks, under its data directory."""
    return Path(data_dir) / "viewer-hook" / "hook.sock"


def parse_event(line: bytes) -> tuple[bool, str] | None:
    """(attached, client_id) from a hook line, or None when the line is not one."""
    try:
        body = json.loads(line)
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    event, client_id = body.get("event"), body.get("client_id")
    if event not in ("attached", "gone") or not isinstance(client_id, str):
        return None
    if not client_id or len(client_id) > _MAX_CLIENT_ID or not client_id.isprintable():
        return None
    return event == "attached", client_id


class ViewerHookListener:
    """An asyncio Unix server for the viewer hook; see the module docstring for what it reports."""

    def __init__(self, path: Path, on_viewer: OnViewer) -> None:
        self._path = Path(path)
        self._on_viewer = on_viewer
        self._viewers: set[str] = set()
        self._server: asyncio.AbstractServer | None = None
        self.refused = 0
        self.malformed = 0

    @property
    def path(self) -> Path:
        """For VncServer and tests in the same process; never for an API answer."""
        return self._path

    @property
    def viewer_ids(self) -> frozenset[str]:
        return frozenset(self._viewers)

    @property
    def viewer_count(self) -> int:
        return len(self._viewers)

    async def start(self) -> None:
        listener = listen_private(self._path, "viewer hook socket", ViewerHookError)
        listener.setblocking(False)
        self._server = await asyncio.start_unix_server(self._accept, sock=listener, limit=_MAX_LINE)
        log.info("viewer hooks: listening")

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None
        with contextlib.suppress(FileNotFoundError):
            self._path.unlink()

    def clear(self) -> None:
        """Forget every viewer (x11vnc stopped or restarted: its client ids mean nothing any more)."""
        if self._viewers:
            self._viewers.clear()
            self._notify(False, "")

    def apply(self, attached: bool, client_id: str) -> None:
        """Record one hook event; calls on_viewer when the set of viewers becomes empty or not."""
        before = bool(self._viewers)
        if attached:
            self._viewers.add(client_id)
        else:
            # A viewer that failed the password also "goes": its id was never in the set.
            self._viewers.discard(client_id)
        after = bool(self._viewers)
        log.info("viewer hooks: viewer %s %s (%d attached)", client_id, "attached" if attached else "gone",
                 len(self._viewers))  # fmt: skip
        if before != after:
            self._notify(after, client_id)

    def _notify(self, attached: bool, client_id: str) -> None:
        try:
            self._on_viewer(attached, client_id)
        except Exception:
            log.exception("viewer hooks: the viewer callback failed")

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await self._handle(reader, writer)
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            uid, _pid = peer_credentials(writer.get_extra_info("socket"))
        except OSError as error:
            log.warning("viewer hooks: no peer credentials on a connection (%s); closed", error)
            return
        if uid != os.getuid():
            self.refused += 1
            log.warning("viewer hooks: refused a connection from uid %d", uid)
            return
        try:
            line = await asyncio.wait_for(reader.readline(), _READ_DEADLINE_S)
        except (TimeoutError, ValueError, ConnectionError):
            line = b""
        event = parse_event(line)
        if event is None:
            self.malformed += 1
            log.warning("viewer hooks: ignored a line that is not a viewer event")
            return
        self.apply(*event)
