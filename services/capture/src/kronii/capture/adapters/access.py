"""Who is on the other end of a local connection, and whether they may talk to the capture service.

The Unix-socket front door (:mod:`kronii.capture.adapters.socket`) reads each connection's peer
credentials (SO_PEERCRED: uid and pid, from the kernel, not from the client) and the executable
behind the pid, checks them against the allow lists here, and splices allowed connections to the
gRPC server on loopback. It records which loopback port each spliced connection uses, so the gRPC
layer can map ``context.peer()`` back to the local client with :func:`identity_for_peer`.
"""

from __future__ import annotations

import os
import socket
import struct
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from kronii.capture.core.identity import PeerIdentity

__all__ = [
    "PEERS",
    "AccessDecision",
    "AccessPolicy",
    "AuditRecorder",
    "PeerRegistry",
    "executable_of",
    "identity_for_peer",
    "peer_credentials",
]

_UCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


class AuditRecorder(Protocol):
    """The shape of ``ServiceContext.record``: one audit row per call."""

    async def __call__(
        self, *, actor: str, action: str, subject: str = "", outcome: str = "", **detail: Any
    ) -> None: ...


@dataclass(frozen=True)
class AccessDecision:
    allowed: bool
    reason: str = ""


def peer_credentials(sock: socket.socket) -> tuple[int, int]:
    """(uid, pid) of the process at the other end of a connected Unix socket."""
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
    pid, uid, _gid = _UCRED.unpack(raw)
    return uid, pid


def executable_of(pid: int) -> str:
    """The resolved executable of ``pid`` from /proc, or "" when it cannot be read.

    A replaced or deleted binary reads as "<path> (deleted)"; that never matches an allow list.
    """
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return ""


@dataclass(frozen=True)
class AccessPolicy:
    """Which local users and executables may connect.

    ``uids`` defaults to the service's own uid. An empty ``executables`` means any executable of
    an allowed user; a non-empty one must contain the client's resolved executable exactly.
    """

    uids: frozenset[int]
    executables: frozenset[str] = frozenset()

    @classmethod
    def build(cls, uids: Iterable[int] = (), executables: Iterable[str] = ()) -> AccessPolicy:
        allowed = frozenset(uids) or frozenset({os.getuid()})
        # Compare resolved paths: an allow list may name a symlink (/usr/bin/python3).
        exes = frozenset(os.path.realpath(exe) for exe in executables if exe)
        return cls(allowed, exes)

    def check(self, peer: PeerIdentity) -> AccessDecision:
        if peer.uid not in self.uids:
            return AccessDecision(False, "uid_not_allowed")
        if self.executables:
            if not peer.exe:
                return AccessDecision(False, "executable_unknown")
            if peer.exe not in self.executables:
                return AccessDecision(False, "executable_not_allowed")
        return AccessDecision(True)


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
        parsed = _parse_peer(peer)
        if parsed is None:
            return None
        with self._lock:
            return self._by_port.get(parsed[1])

    def __len__(self) -> int:
        with self._lock:
            return len(self._by_port)


PEERS = PeerRegistry()


def identity_for_peer(peer: str) -> PeerIdentity | None:
    """The local client behind a gRPC ``context.peer()``, or None when the call did not come
    through the Unix socket (then it must carry an agent session)."""
    return PEERS.identity_for_peer(peer)
