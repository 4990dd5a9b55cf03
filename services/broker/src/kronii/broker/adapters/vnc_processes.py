"""What procfs says about x11vnc processes and TCP ports, for a broker that starts after another
ended badly: the x11vncs an earlier broker of the same data dir left running (found by their command
line: ``-flag <data dir>/broker/vnc/port`` names one data dir), how many viewers each has connected,
which process holds a port, and how to stop a process that is not this one's child.

Linux only. Every read that fails answers "not known" (None, or a vaguer sentence), never a guess
that nobody is there. Blocking: call from a thread.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "TcpSocket",
    "is_x11vnc_of",
    "parse_tcp_table",
    "port_holder",
    "stop_process",
    "viewers_connected",
    "x11vncs_of",
]

_PROC = Path("/proc")
_LISTEN = 0x0A
_ESTABLISHED = 0x01
_POLL_S = 0.05


@dataclass(frozen=True)
class TcpSocket:
    """One row of /proc/net/tcp or tcp6: the local port, the TCP state, the owner's uid, the inode."""

    port: int
    state: int
    uid: int
    inode: int


def parse_tcp_table(text: str) -> list[TcpSocket]:
    """The rows of a /proc/net/tcp or /proc/net/tcp6 file; a line that is not a row is skipped."""
    rows = []
    for line in text.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 10 or ":" not in fields[1]:
            continue
        try:
            port = int(fields[1].rsplit(":", 1)[1], 16)
            rows.append(TcpSocket(port, int(fields[3], 16), int(fields[7]), int(fields[9])))
        except ValueError:
            continue
    return rows


def _argv(pid: int) -> list[str] | None:
    try:
        raw = (_PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return None
    return [os.fsdecode(part) for part in raw.split(b"\0") if part]


def _pids() -> list[int]:
    return [int(entry.name) for entry in _PROC.iterdir() if entry.name.isdigit()]


def is_x11vnc_of(pid: int, vnc_dir: Path) -> bool:
    """Whether ``pid`` is an x11vnc started for ``vnc_dir`` (its ``-flag`` file is in it)."""
    argv = _argv(pid)
    if not argv or Path(argv[0]).name != "x11vnc":
        return False
    flag = str(Path(vnc_dir) / "port")
    return any(arg == "-flag" and value == flag for arg, value in itertools.pairwise(argv))


def x11vncs_of(vnc_dir: Path) -> list[int]:
    """The running x11vnc processes started for ``vnc_dir``, by any broker, this one's own included."""
    return [pid for pid in _pids() if pid != os.getpid() and is_x11vnc_of(pid, vnc_dir)]


def _socket_inodes(pid: int) -> set[int] | None:
    inodes = set()
    try:
        entries = list((_PROC / str(pid) / "fd").iterdir())
    except OSError:
        return None
    for entry in entries:
        with contextlib.suppress(OSError):
            target = os.readlink(entry)
            if target.startswith("socket:["):
                inodes.add(int(target[8:-1]))
    return inodes


def _tcp_sockets(pid: int | str) -> list[TcpSocket] | None:
    rows = []
    for name in ("tcp", "tcp6"):
        try:
            rows += parse_tcp_table((_PROC / str(pid) / "net" / name).read_text())
        except FileNotFoundError:
            continue  # no IPv6 in this kernel
        except OSError:
            return None
    return rows


def viewers_connected(pid: int) -> int | None:
    """How many TCP clients are connected to the ports ``pid`` listens on (x11vnc: its viewers,
    those still at the password prompt included); None when procfs does not say."""
    inodes, rows = _socket_inodes(pid), _tcp_sockets(pid)
    if inodes is None or rows is None:
        return None
    own = [row for row in rows if row.inode in inodes]
    listening = {row.port for row in own if row.state == _LISTEN}
    return sum(1 for row in own if row.state == _ESTABLISHED and row.port in listening)


def _name(pid: int) -> str:
    argv = _argv(pid)
    if argv:
        return Path(argv[0]).name
    with contextlib.suppress(OSError):
        return (_PROC / str(pid) / "comm").read_text().strip()
    return "a process"


def port_holder(port: int) -> str:
    """Who listens on TCP ``port``, as words for a sentence: "another x11vnc (pid 812)",
    "nc (pid 90)", "a process of another user (uid 1001)"; "" when nothing listens there."""
    rows = _tcp_sockets("self") or []
    held = [row for row in rows if row.port == port and row.state == _LISTEN]
    if not held:
        return ""
    wanted = {row.inode for row in held}
    for pid in _pids():
        inodes = _socket_inodes(pid)
        if inodes and inodes & wanted:
            name = _name(pid)
            return f"another x11vnc (pid {pid})" if name == "x11vnc" else f"{name} (pid {pid})"
    uid = held[0].uid
    return f"a process of another user (uid {uid})" if uid != os.getuid() else "another program"


def _gone(pid: int) -> bool:
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[0] in ("Z", "X")  # a zombie holds no port any more


def _wait_gone(pid: int, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while not _gone(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL_S)
    return True


def _signal(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        # x11vnc runs in a session of its own: its group holds the hooks it started too.
        if os.getpgid(pid) == pid:
            os.killpg(pid, signum)
        else:
            os.kill(pid, signum)


def stop_process(pid: int, vnc_dir: Path, grace_s: float = 3.0) -> bool:
    """Stop an x11vnc of ``vnc_dir`` that is not this process's child: SIGTERM, then SIGKILL after
    ``grace_s``. Checks the command line first, so a pid reused by anything else is left alone.
    True once it is gone."""
    if not is_x11vnc_of(pid, vnc_dir):
        return _gone(pid)
    _signal(pid, signal.SIGTERM)
    if _wait_gone(pid, grace_s):
        return True
    _signal(pid, signal.SIGKILL)
    return _wait_gone(pid, grace_s)
