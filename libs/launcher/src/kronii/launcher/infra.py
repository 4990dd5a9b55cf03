"""Embedded infrastructure: real NATS, Redis and PostgreSQL servers installed from PyPI.

`kronii up` and the test fixtures start them the same way, for each one whose URL is not set, on the
ports of `InfraPorts` (`free_port` gives a free one). Each server is its own module (embedded_nats,
embedded_redis, embedded_postgres); their data and generated credentials live in the kronii data
directory (private_data: 0700, files 0600). A server that dies can be started again on the same
directory, port and credentials (`respawn`).
"""

from __future__ import annotations

import secrets
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from kronii.launcher.embedded_nats import spawn_nats
from kronii.launcher.embedded_postgres import postgres_accepts, spawn_postgres, wait_accepting
from kronii.launcher.embedded_redis import spawn_redis
from kronii.launcher.embedded_server import InfraError, InfraServer
from kronii.launcher.private_data import ensure_private_dir
from kronii.launcher.processes import Child, LineSink

__all__ = ["EmbeddedInfra", "InfraPorts", "free_port"]


@dataclass(frozen=True)
class InfraPorts:
    nats: int = 14222
    redis: int = 16379
    postgres: int = 15432


_PORTS_GIVEN: set[int] = set()
_LISTEN_PORTS_BELOW_EPHEMERAL = 12_000


def free_port() -> int:
    """A loopback port nothing listens on, for a server started next (tests, benchmarks).

    Chosen below the kernel's ephemeral range: a port from that range (what binding port 0 gives) can
    be taken by any outgoing connection made before the server binds it, and a mesh starting up makes
    hundreds (seen: a `kronii up` whose shared process could not bind its HTTP port). Never the same
    port twice in one process."""
    low, high = _below_ephemeral()
    if high > low:
        for _ in range(200):
            port = secrets.randbelow(high - low) + low
            if port not in _PORTS_GIVEN and _bindable(port):
                _PORTS_GIVEN.add(port)
                return port
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _below_ephemeral() -> tuple[int, int]:
    try:
        first = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        first = 32768
    return max(10_000, first - _LISTEN_PORTS_BELOW_EPHEMERAL), first


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


class EmbeddedInfra:
    """Starts the servers that have no URL configured, and stops what it started."""

    def __init__(self, data_dir: Path, ports: InfraPorts, *, sink: LineSink | None = None) -> None:
        self.data_dir = ensure_private_dir(data_dir)
        self.ports = ports
        self.sink = sink
        self.servers: dict[str, InfraServer] = {}

    # ---- public ------------------------------------------------------------------------------

    def start(
        self, *, nats_url: str | None, redis_url: str | None, database_url: str | None, timeout: float = 30.0
    ) -> dict[str, InfraServer]:
        configured = {"nats": nats_url, "redis": redis_url, "postgres": database_url}
        # Spawn every server first, then wait for each: they start side by side. Spawning stays on
        # this thread because a child's parent-death signal fires when the spawning thread ends.
        try:
            pending: list[tuple[InfraServer, int]] = []
            for name, url in configured.items():
                if url:
                    self.servers[name] = InfraServer(name, url, False)
                else:
                    port = getattr(self.ports, name)
                    self._check_port(name, port)
                    server = self._spawn(name)
                    self.servers[name] = server
                    pending.append((server, port))
            for server, port in pending:
                assert server.child is not None
                self._wait_port(server.child, port, timeout)
                if server.name == "postgres":
                    wait_accepting(server.child, port)
        except BaseException:
            self.stop()
            raise
        return {name: self.servers[name] for name in ("nats", "redis", "postgres")}

    def respawn(self, name: str, timeout: float = 5.0) -> Child:
        """Start a dead embedded server again on its data directory, port and credentials.

        Returns at once with the new child; `answers(name)` tells when it serves again.
        """
        server = self.servers[name]
        old = server.child
        if old is None:
            raise InfraError(f"{name} is not an embedded server")
        # Reaps it and kills what it left in its process group: PostgreSQL's backends outlive a
        # killed postmaster for a moment, and a new one refuses to start while they hold its memory.
        old.stop(0.1)
        deadline = time.monotonic() + timeout
        while not old.group_gone() and time.monotonic() < deadline:
            time.sleep(0.02)
        child = self._spawn(name).child
        if child is None:
            raise InfraError(f"the embedded {name} could not be started again")
        server.child = child
        return child

    def answers(self, name: str) -> bool:
        """Whether the embedded server takes requests: its port is open and, for PostgreSQL, it
        accepts sessions (it opens its port before crash recovery ends). Blocks at most about 1 s."""
        port = getattr(self.ports, name)
        if not _port_open(port):
            return False
        return name != "postgres" or postgres_accepts(port)[0]

    def stop(self, timeout: float = 3.0) -> None:
        for name in ("postgres", "redis", "nats"):
            server = self.servers.get(name)
            if server is not None and server.child is not None:
                server.child.stop(timeout)

    # ---- servers -----------------------------------------------------------------------------

    def _check_port(self, name: str, port: int) -> None:
        if _port_open(port):
            raise InfraError(
                f"cannot start the embedded {name}: port {port} on 127.0.0.1 is already in use "
                f"(set KRONII_EMBEDDED_{name.upper()}_PORT to another port, or set the server's URL)"
            )

    def _wait_port(self, child: Child, port: int, timeout: float) -> None:
        if not child.wait_for(lambda: _port_open(port), timeout):
            tail = "\n".join(child.lines[-15:])
            child.stop(2)
            raise InfraError(f"the embedded {child.name} did not start within {timeout:.0f} s:\n{tail}")

    def _spawn(self, name: str) -> InfraServer:
        spawners = {"nats": spawn_nats, "redis": spawn_redis, "postgres": spawn_postgres}
        return spawners[name](self.data_dir, getattr(self.ports, name), self.sink)
