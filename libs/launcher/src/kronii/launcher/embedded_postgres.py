"""The embedded PostgreSQL server (from the pgserver package): a cluster in the data directory made
once by initdb with a generated password, run as a dedicated system user when kronii runs as root,
listening on loopback only, and waited for until it accepts sessions."""

from __future__ import annotations

import os
import pwd
import signal
import subprocess
from pathlib import Path
from urllib.parse import quote

from kronii.launcher.embedded_server import InfraError, InfraServer, package_dir
from kronii.launcher.posix_acl import grant_traverse, traversable_by
from kronii.launcher.private_data import ensure_private_dir, secret, write_private
from kronii.launcher.processes import Child, LineSink

__all__ = [
    "DATABASE_WAIT_SECS",
    "POSTGRES_SYSTEM_USER",
    "postgres_accepts",
    "postgres_bin_dir",
    "spawn_postgres",
    "wait_accepting",
]

POSTGRES_SYSTEM_USER = "kronii-pg"
# How long a started PostgreSQL may refuse connections before the start counts as failed.
DATABASE_WAIT_SECS = 15.0


def postgres_bin_dir() -> Path:
    return package_dir("pgserver") / "pginstall" / "bin"


def spawn_postgres(data_dir: Path, port: int, sink: LineSink | None) -> InfraServer:
    bin_dir = postgres_bin_dir()
    pgdata = data_dir / "postgres"
    password = secret(data_dir, "postgres_password")
    uid, gid = _postgres_identity(pgdata)
    if not (pgdata / "PG_VERSION").exists():
        _initdb(bin_dir, pgdata, password, uid, gid)
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
        sink=sink,
        user=uid,
        group=gid,
        # SIGINT is PostgreSQL's fast shutdown; SIGTERM would wait for every client to leave.
        stop_signal=signal.SIGINT,
        death_signal=signal.SIGQUIT,
    )
    url = f"postgresql://kronii:{quote(password, safe='')}@127.0.0.1:{port}/kronii"
    return InfraServer("postgres", url, True, child)


def _postgres_identity(pgdata: Path) -> tuple[int | None, int | None]:
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


def _initdb(bin_dir: Path, pgdata: Path, password: str, uid: int | None, gid: int | None) -> None:
    # Beside, not inside: initdb wants an empty directory.
    pwfile = pgdata.parent / ".postgres-initpw"
    write_private(pwfile, password + "\n")
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


def wait_accepting(child: Child, port: int) -> None:
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
    accepts, answer = retrying(postgres_accepts, port)
    if not accepts:
        raise InfraError(f"postgres is not accepting connections: {answer}")


def postgres_accepts(port: int) -> tuple[bool, str]:
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
