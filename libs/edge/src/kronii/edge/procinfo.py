"""What /proc says about a local caller: its executable, session, controlling terminal, start time
and what its standard input is; and the device a claimed terminal name stands for."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from kronii.edge.peers import ProcFacts, decode_tty_nr

__all__ = ["claimed_device", "executable_of", "proc_facts", "start_ticks"]

_PROC = Path("/proc")


def executable_of(pid: int) -> str:
    """The resolved executable of ``pid`` from /proc, or "" when it cannot be read.

    A replaced or deleted binary reads as "<path> (deleted)"; that never matches an allow list.
    """
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return ""


def _stat_fields(pid: int, proc: Path) -> list[str] | None:
    """The fields after the command name (which may hold spaces and parentheses)."""
    try:
        text = (proc / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[-1].split()
    return fields if len(fields) >= 20 else None


def start_ticks(pid: int, proc: Path = _PROC) -> int | None:
    """Field 22 of /proc/<pid>/stat: clock ticks after boot when the process started."""
    fields = _stat_fields(pid, proc)
    return None if fields is None else int(fields[19])


def _device(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISCHR(info.st_mode):
        return None
    return os.major(info.st_rdev), os.minor(info.st_rdev)


def proc_facts(pid: int, uid: int, proc: Path = _PROC) -> ProcFacts | None:
    """The caller as the kernel sees it, or None when it is gone."""
    fields = _stat_fields(pid, proc)
    if fields is None:
        return None
    session = int(fields[3])
    return ProcFacts(
        pid=pid,
        uid=uid,
        session=session,
        tty=decode_tty_nr(int(fields[4])),
        start_ticks=int(fields[19]),
        stdin=_device(str(proc / str(pid) / "fd" / "0")),
        leader_start_ticks=start_ticks(session, proc) if session > 0 else None,
    )


def claimed_device(name: str) -> tuple[int, int] | None:
    """The (major, minor) of a terminal the client names; None unless it is a character device
    under /dev (a claim must not make the service stat arbitrary files)."""
    if not name.startswith("/dev/") or ".." in name:
        return None
    return _device(name)
