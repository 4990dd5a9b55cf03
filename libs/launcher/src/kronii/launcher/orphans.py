"""What `kronii up` owns: every process its services start, also those that leave its process group.

A service starts helpers in sessions of their own (the broker's x11vnc, the supervisor's `tmux -C`), so
killing a service process's group does not reach them, and when the service process dies outright (a kill
-9, an OOM kill) they would be re-parented to init and live on: an x11vnc still serving the desktop on its
port, a tmux client still attached. So `kronii up` makes itself a child subreaper (PR_SET_CHILD_SUBREAPER):
what a dead service process leaves is re-parented to `kronii up`, which knows it by the `KRONII_UP_UNIT`
variable every process of that service process inherits, and stops it (its whole tree and process group)
before the service starts again, and when kronii stops.

Two kinds of process are meant to outlive the service that started them, and are left alone: a tmux
server (the agents' sessions run on after kronii stops unless asked, `kronii up --stop-agents`) and a
process started with `KRONII_DETACHED=1` in its environment (an application opened for the person).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DETACHED_ENV",
    "UNIT_ENV",
    "Orphan",
    "orphans_of",
    "reap_adopted",
    "set_subreaper",
    "stop_control_session",
    "stop_orphans",
]

UNIT_ENV = "KRONII_UP_UNIT"
DETACHED_ENV = "KRONII_DETACHED"
_PR_SET_CHILD_SUBREAPER = 36
# The tmux session the supervisor's control client holds open (kronii.supervisor.adapters.tmux_connection): it ends
# it when it stops cleanly; after a crash kronii up does.
CONTROL_SESSION = "_kronii_control"
_PROC = Path("/proc")


@dataclass(frozen=True)
class Orphan:
    pid: int
    name: str

    def __str__(self) -> str:
        return f"{self.name} (pid {self.pid})"


def set_subreaper(on: bool) -> bool:
    """Make this process the one its descendants' orphans are re-parented to (or stop being it)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1 if on else 0, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, pgid) of a process, None when it is gone."""
    try:
        text = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[1]), int(fields[2])


def _comm(pid: int) -> str:
    try:
        return (_PROC / str(pid) / "comm").read_text().strip()
    except OSError:
        return "?"


def _environ(pid: int) -> dict[str, str]:
    try:
        raw = (_PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return {}
    found = {}
    for item in raw.split(b"\0"):
        key, separator, value = item.partition(b"=")
        if separator:
            found[key.decode(errors="replace")] = value.decode(errors="replace")
    return found


def children(pid: int) -> list[int]:
    """The live or dead (zombie) children of `pid`."""
    task_dir = _PROC / str(pid) / "task"
    found: list[int] = []
    try:
        tasks = list(task_dir.iterdir())
        for task in tasks:
            found.extend(int(word) for word in (task / "children").read_text().split())
        return found
    except OSError:
        pass  # a kernel without /proc/<pid>/task/<tid>/children: look at every process
    for entry in _PROC.iterdir():
        if entry.name.isdigit():
            stat = _stat(int(entry.name))
            if stat is not None and stat[1] == pid:
                found.append(int(entry.name))
    return found


def _tree(pid: int) -> list[int]:
    """`pid` and every descendant of it."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        pending.extend(children(current))
    return found


def _outlives_kronii(pid: int, environment: dict[str, str]) -> bool:
    return _comm(pid).startswith("tmux: server") or environment.get(DETACHED_ENV) == "1"


def orphans_of(units: Collection[str], known: Collection[int]) -> list[Orphan]:
    """The processes re-parented to this one that a service process of `units` started (the value of
    its UNIT_ENV), other than `known` children and those meant to outlive kronii."""
    found = []
    for pid in children(os.getpid()):
        if pid in known:
            continue
        stat = _stat(pid)
        if stat is None or stat[0] in ("Z", "X"):
            continue
        environment = _environ(pid)
        if environment.get(UNIT_ENV) in units and not _outlives_kronii(pid, environment):
            found.append(Orphan(pid, _comm(pid)))
    return found


def _alive(pid: int) -> bool:
    stat = _stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")


def _signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        stat = _stat(pid)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if stat is not None and stat[2] == pid:
                os.killpg(pid, sig)  # a group leader: what it started in its group (x11vnc's hooks) too
            os.kill(pid, sig)


def stop_orphans(orphans: list[Orphan], known: Collection[int], grace: float = 2.0) -> None:
    """SIGTERM each orphan's tree, SIGKILL what is left after `grace` seconds, and reap them."""
    pids = [pid for orphan in orphans for pid in _tree(orphan.pid)]
    _signal_all(pids, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
        reap_adopted(known)
        time.sleep(0.02)
    left = [pid for pid in pids if _alive(pid)]
    if left:
        _signal_all(left, signal.SIGKILL)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and any(_alive(pid) for pid in left):
            time.sleep(0.02)
    reap_adopted(known)


def reap_adopted(known: Collection[int]) -> None:
    """Collect the exit status of every adopted child that has ended, so that none stays a zombie.
    `known` are the children a subprocess.Popen waits for itself: never reaped here."""
    for pid in children(os.getpid()):
        if pid in known:
            continue
        stat = _stat(pid)
        if stat is not None and stat[0] in ("Z", "X"):
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)


def stop_control_session() -> bool:
    """End the supervisor's tmux control session on its server (the one of KRONII_SUPERVISOR_TMUX_SOCKET, else
    the default); the agents' sessions and any other are left alone. Whether one was ended."""
    binary = os.environ.get("KRONII_SUPERVISOR_TMUX_BINARY", "tmux")
    if shutil.which(binary) is None:
        return False
    socket = os.environ.get("KRONII_SUPERVISOR_TMUX_SOCKET")
    argv = [binary, *(["-S", socket] if socket else []), "kill-session", "-t", f"={CONTROL_SESSION}"]
    env = {key: value for key, value in os.environ.items() if key not in ("TMUX", "TMUX_PANE")}
    try:
        done = subprocess.run(argv, capture_output=True, timeout=5, check=False, env=env)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0
