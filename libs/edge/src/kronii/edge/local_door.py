"""A service's local front door: a 0600 Unix socket in a 0700 directory, spliced to its loopback server.

Each connection's peer credentials (uid, pid) come from the kernel (SO_PEERCRED) and its executable
from /proc; a peer outside the :class:`PeerPolicy` is refused, audited (``<service>.connect``) and
disconnected before a byte reaches the service. An allowed connection is spliced byte for byte to the
service's server on loopback, and the loopback port of that upstream connection is registered in the
service's :class:`PeerRegistry`, so its gRPC layer can map ``context.peer()`` back to the local client.

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
import struct
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from kronii.edge.peers import PeerIdentity
from kronii.edge.procinfo import executable_of, start_ticks
from kronii.foundation.audit_trail import AuditTrail

__all__ = [
    "FrontDoorError",
    "LocalFrontDoor",
    "PeerDecision",
    "PeerPolicy",
    "PeerRegistry",
    "peer_credentials",
]

log = logging.getLogger(__name__)

_CHUNK = 64 * 1024
_UCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


class FrontDoorError(RuntimeError):
    """The socket cannot be set up safely; the message is a sentence without a path."""


@dataclass(frozen=True)
class PeerDecision:
    allowed: bool
    reason: str = ""


def peer_credentials(sock: socket.socket) -> tuple[int, int]:
    """(uid, pid) of the process at the other end of a connected Unix socket."""
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
    pid, uid, _gid = _UCRED.unpack(raw)
    return uid, pid


@dataclass(frozen=True)
class PeerPolicy:
    """Which local users and executables may connect.

    ``uids`` defaults to the service's own uid. An empty ``executables`` means any executable of
    an allowed user; a non-empty one must contain the client's resolved executable exactly.
    """

    uids: frozenset[int]
    executables: frozenset[str] = frozenset()

    @classmethod
    def build(cls, uids: Iterable[int] = (), executables: Iterable[str] = ()) -> PeerPolicy:
        allowed = frozenset(uids) or frozenset({os.getuid()})
        # Compare resolved paths: an allow list may name a symlink (/usr/bin/python3).
        exes = frozenset(os.path.realpath(exe) for exe in executables if exe)
        return cls(allowed, exes)

    def check(self, peer: PeerIdentity) -> PeerDecision:
        if peer.uid not in self.uids:
            return PeerDecision(False, "uid_not_allowed")
        if self.executables:
            if not peer.exe:
                return PeerDecision(False, "executable_unknown")
            if peer.exe not in self.executables:
                return PeerDecision(False, "executable_not_allowed")
        return PeerDecision(True)


def _parse_peer(peer: str) -> tuple[str, int] | None:
    """('127.0.0.1', 54321) from grpc's "ipv4:127.0.0.1:54321" or "ipv6:[::1]:54321"."""
    kind, _, rest = peer.partition(":")
    host, _, port = rest.rpartition(":")
    if kind not in ("ipv4", "ipv6") or not port.isdigit():
        return None
    host = host.strip("[]")
    if host not in ("127.0.0.1", "::1", "::ffff:127.0.0.1"):
        return None
    return host, int(port)


class PeerRegistry:
    """Loopback port of a spliced upstream connection -> the local client behind it.

    A port is registered before the first byte is forwarded and forgotten before the upstream
    socket closes, so a port the kernel hands to another process later is never mistaken for it.
    Each service keeps its own: the kernel may give one local port to two connections whose
    destinations differ, so one registry for two upstream servers could confuse their clients.
    """

    def __init__(self) -> None:
        self._by_port: dict[int, PeerIdentity] = {}
        self._lock = threading.Lock()  # grpc servicers may run in other threads

    def register(self, port: int, identity: PeerIdentity) -> None:
        with self._lock:
            self._by_port[port] = identity

    def forget(self, port: int) -> None:
        with self._lock:
            self._by_port.pop(port, None)

    def identity_for_peer(self, peer: str) -> PeerIdentity | None:
        """The local client behind a gRPC ``context.peer()``, or None when the call did not come
        through the front door."""
        parsed = _parse_peer(peer)
        if parsed is None:
            return None
        with self._lock:
            return self._by_port.get(parsed[1])

    def __len__(self) -> int:
        with self._lock:
            return len(self._by_port)


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


def _clear_stale_socket(path: Path, service: str) -> None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(info.st_mode):
        raise FrontDoorError(f"something that is not a socket is in the way of the {service} socket")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.5)
        if probe.connect_ex(str(path)) == 0:
            raise FrontDoorError(f"another {service} service is already listening on the local socket")
    path.unlink()


def _listen(path: Path) -> socket.socket:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    # The directory is already 0700; the umask closes the moment between bind and chmod anyway.
    previous = os.umask(0o177)
    try:
        listener.bind(str(path))
    except OSError:
        listener.close()
        raise
    finally:
        os.umask(previous)
    os.chmod(path, 0o600)
    listener.listen(64)
    listener.setblocking(False)
    return listener


class LocalFrontDoor:
    """An asyncio Unix server that admits allowed local peers and splices them to ``upstream``.

    ``service`` names the door in log lines, in its refusals' audit action (``<service>.connect``)
    and in the sentences of :class:`FrontDoorError`; ``peers`` is the service's own registry, the one
    its gRPC layer asks."""

    def __init__(
        self,
        path: Path,
        upstream: tuple[str, int],
        policy: PeerPolicy,
        *,
        service: str,
        peers: PeerRegistry,
        record: AuditTrail | None = None,
        on_refused: Callable[[str], None] | None = None,
    ) -> None:
        self._path = Path(path)
        self._service = service
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
        _clear_stale_socket(self._path, self._service)
        self._server = await asyncio.start_unix_server(self._accept, sock=_listen(self._path))
        log.info("%s socket: listening for local clients", self._service)

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
            log.warning("%s socket: no peer credentials on a connection (%s); closed", self._service, error)
            return
        peer = PeerIdentity(uid=uid, pid=pid, exe=executable_of(pid), start_ticks=start_ticks(pid) or 0)
        decision = self._policy.check(peer)
        if not decision.allowed:
            await self._refuse(peer, decision.reason)
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self._upstream)
        except OSError as error:
            log.error(
                "%s socket: the gRPC server does not answer (%s); client disconnected", self._service, error
            )
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

    async def _refuse(self, peer: PeerIdentity, reason: str) -> None:
        self.refused += 1
        if self._on_refused is not None:
            self._on_refused(reason)
        log.warning(
            "%s socket: refused uid %d pid %d (%s): %s",
            self._service,
            peer.uid,
            peer.pid,
            peer.exe_name,
            reason,
        )
        if self._record is None:
            return
        await self._record(
            actor=peer.actor,
            action=f"{self._service}.connect",
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
