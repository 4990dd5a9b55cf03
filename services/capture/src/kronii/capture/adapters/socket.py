"""The capture service's local front door: a 0600 Unix socket in a 0700 directory.

Each connection's peer credentials (uid, pid) come from the kernel (SO_PEERCRED) and its
executable from /proc; a peer outside the allow lists is refused, audited and disconnected before a
byte reaches the service. An allowed connection is spliced byte for byte to the gRPC server on
loopback, and the loopback port of that upstream connection is registered in a
:class:`~kronii.capture.adapters.access.PeerRegistry` for the gRPC layer to look up.

File permissions already keep other users out; the peer check is the second wall, for a socket
whose directory or mode was loosened and for the executable allow list that modes cannot express.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import stat
from collections.abc import Callable
from pathlib import Path

from kronii.capture.adapters.access import (
    PEERS,
    AccessPolicy,
    AuditRecorder,
    PeerRegistry,
    executable_of,
    peer_credentials,
)
from kronii.capture.adapters.procinfo import start_ticks
from kronii.capture.core.identity import PeerIdentity
from kronii.common.rendezvous import CAPTURE_SOCKET_NAME, capture_socket_path

__all__ = ["SOCKET_NAME", "FrontDoorError", "LocalFrontDoor", "socket_path"]

log = logging.getLogger(__name__)

SOCKET_NAME = CAPTURE_SOCKET_NAME
_CHUNK = 64 * 1024


class FrontDoorError(RuntimeError):
    """The socket cannot be set up safely; the message is a sentence without a path."""


def socket_path(data_dir: Path, socket_dir: Path | None = None, *, runtime_dir: str | None = None) -> Path:
    """The socket's path (kronii.common.rendezvous.capture_socket_path: clients use the same rule)."""
    return capture_socket_path(data_dir, socket_dir, runtime_dir=runtime_dir)


def _private_directory(directory: Path) -> None:
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(directory)
    except OSError as error:
        raise FrontDoorError(f"the socket directory cannot be created: {error.strerror}") from None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise FrontDoorError("the socket directory is not a directory owned by this user")
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(directory, 0o700)


def _clear_stale_socket(path: Path) -> None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(info.st_mode):
        raise FrontDoorError("something that is not a socket is in the way of the capture socket")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.5)
        if probe.connect_ex(str(path)) == 0:
            raise FrontDoorError("another capture service is already listening on the local socket")
    path.unlink()


class LocalFrontDoor:
    """An asyncio Unix server that admits allowed local peers and splices them to ``upstream``."""

    def __init__(
        self,
        path: Path,
        upstream: tuple[str, int],
        policy: AccessPolicy,
        *,
        peers: PeerRegistry = PEERS,
        record: AuditRecorder | None = None,
        on_refused: Callable[[str], None] | None = None,
    ) -> None:
        self._path = Path(path)
        self._on_refused = on_refused
        self._upstream = upstream
        self._policy = policy
        self._peers = peers
        self._record = record
        self._server: asyncio.AbstractServer | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self.refused = 0

    @property
    def path(self) -> Path:
        """For the service's own use (clients in the same process, tests); never for an API answer."""
        return self._path

    @property
    def active_connections(self) -> int:
        return len(self._connections)

    async def start(self) -> None:
        _private_directory(self._path.parent)
        _clear_stale_socket(self._path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # The directory is already 0700; the umask closes the moment between bind and chmod anyway.
        previous = os.umask(0o177)
        try:
            listener.bind(str(self._path))
        except OSError:
            listener.close()
            raise
        finally:
            os.umask(previous)
        os.chmod(self._path, 0o600)
        listener.listen(64)
        listener.setblocking(False)
        self._server = await asyncio.start_unix_server(self._accept, sock=listener)
        log.info("capture socket: listening for local clients")

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None
        for task in list(self._connections):
            task.cancel()
        if self._connections:
            await asyncio.gather(*self._connections, return_exceptions=True)
        with contextlib.suppress(FileNotFoundError):
            self._path.unlink()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            await self._handle(reader, writer)
        finally:
            if task is not None:
                self._connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            uid, pid = peer_credentials(writer.get_extra_info("socket"))
        except OSError as error:
            log.warning("capture socket: no peer credentials on a connection (%s); closed", error)
            return
        peer = PeerIdentity(uid=uid, pid=pid, exe=executable_of(pid), start_ticks=start_ticks(pid) or 0)
        decision = self._policy.check(peer)
        if not decision.allowed:
            self.refused += 1
            if self._on_refused is not None:
                self._on_refused(decision.reason)
            log.warning(
                "capture socket: refused uid %d pid %d (%s): %s", uid, pid, peer.exe_name, decision.reason
            )
            await self._audit_refusal(peer, decision.reason)
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self._upstream)
        except OSError as error:
            log.error("capture socket: the gRPC server does not answer (%s); client disconnected", error)
            return
        port = int(up_writer.get_extra_info("sockname")[1])
        self._peers.register(port, peer)
        try:
            await _splice(reader, writer, up_reader, up_writer)
        finally:
            # Forget the port before closing the socket that holds it.
            self._peers.forget(port)
            up_writer.close()
            with contextlib.suppress(Exception):
                await up_writer.wait_closed()

    async def _audit_refusal(self, peer: PeerIdentity, reason: str) -> None:
        if self._record is None:
            return
        await self._record(
            actor=peer.actor,
            action="capture.connect",
            outcome="refused",
            uid=peer.uid,
            pid=peer.pid,
            exe=peer.exe,
            reason=reason,
        )


async def _pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    while data := await source.read(_CHUNK):
        sink.write(data)
        await sink.drain()


async def _splice(
    client_reader: asyncio.StreamReader,
    client_writer: asyncio.StreamWriter,
    up_reader: asyncio.StreamReader,
    up_writer: asyncio.StreamWriter,
) -> None:
    """Copy both ways until either side ends; HTTP/2 does not half-close, so one end ends both."""
    tasks = {
        asyncio.create_task(_pump(client_reader, up_writer)),
        asyncio.create_task(_pump(up_reader, client_writer)),
    }
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
