"""What /proc says of an agent's processes: start time, environment, working directory, whether
one lives and what its terminal runs in the foreground, and the agent among the registered process
and its descendants (adapters/sessions.py reads its files)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from kronii.supervisor.core.agent_world import AgentWorld

__all__ = [
    "SHELLS",
    "ProcessInfo",
    "agent_process",
    "agent_world",
    "descendants",
    "foreground_of",
    "pid_alive",
    "process_info",
    "process_name",
]

# What a pane runs when no agent is in front: the agent is not one of these.
SHELLS = frozenset(
    {"sh", "bash", "dash", "zsh", "fish", "ksh", "mksh", "tcsh", "csh", "ash", "busybox", "nu"}
)


@dataclass(frozen=True)
class ProcessInfo:
    pid: int
    cwd: str
    # Epoch seconds, from the kernel's start tick and the boot time.
    started_at: float
    # The environment the process was started with (/proc/<pid>/environ).
    env: Mapping[str, str]
    argv: tuple[str, ...] = ()
    name: str = ""  # /proc/<pid>/comm


@cache
def _boot_time() -> float | None:
    try:
        for line in Path("/proc/stat").read_text(encoding="ascii", errors="replace").splitlines():
            if line.startswith("btime "):
                return float(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def _start_time(stat: str) -> float | None:
    """Field 22 of /proc/<pid>/stat (clock ticks after boot) as epoch seconds."""
    boot = _boot_time()
    try:
        ticks = int(stat[stat.rindex(")") + 2 :].split()[19])  # fields 3.. follow "pid (comm) "
    except (ValueError, IndexError):
        return None
    return None if boot is None else boot + ticks / os.sysconf("SC_CLK_TCK")


def _environ(raw: bytes) -> dict[str, str]:
    env: dict[str, str] = {}
    for item in raw.split(b"\0"):
        key, sep, value = item.partition(b"=")
        if sep and key:
            env[os.fsdecode(key)] = os.fsdecode(value)
    return env


def process_info(pid: int) -> ProcessInfo | None:
    """What /proc says of a live process, or None when it is gone, a zombie or not ours to read."""
    if pid <= 0:
        return None
    base = Path(f"/proc/{pid}")
    try:
        stat = (base / "stat").read_text(encoding="utf-8", errors="replace")
        cwd = os.readlink(base / "cwd")
    except OSError:
        return None
    started_at = _start_time(stat)
    if started_at is None:
        return None
    try:
        env = _environ((base / "environ").read_bytes())
    except OSError:
        env = {}
    try:
        argv = tuple(os.fsdecode(a) for a in (base / "cmdline").read_bytes().split(b"\0") if a)
    except OSError:
        argv = ()
    try:
        name = (base / "comm").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        name = ""
    return ProcessInfo(pid=pid, cwd=cwd, started_at=started_at, env=env, argv=argv, name=name)


def foreground_of(pane_pid: int) -> int | None:
    """The foreground process group of the pane's terminal, from /proc/<pane_pid>/stat (tpgid)."""
    try:
        raw = Path(f"/proc/{pane_pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2 :].split()
    # After "pid (comm) ": state ppid pgrp session tty_nr tpgid ...
    tpgid = int(fields[5])
    return tpgid if tpgid > 0 else None


def process_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return False
    return state[state.rindex(")") + 2 :].split()[0] not in ("Z", "X")


def _children(pid: int) -> list[int] | None:
    """Direct children from /proc/<pid>/task/*/children; None when the kernel lacks that file."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    out: list[int] = []
    for tid in tasks:
        try:
            text = Path(f"/proc/{pid}/task/{tid}/children").read_text(encoding="ascii")
        except FileNotFoundError:
            return None
        except OSError:
            continue
        out.extend(int(child) for child in text.split())
    return out


def _parents() -> dict[int, list[int]]:
    """Every process's children, from one pass over /proc/*/stat (field 4 is the parent)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text(encoding="utf-8", errors="replace")
            ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    return children


def descendants(pid: int) -> list[int]:
    """The process's children, grandchildren and so on, parents before children: the registered
    pid may be a wrapper (a shell, the npm `codex` node script) around the agent itself."""
    table: dict[int, list[int]] | None = None
    seen = {pid}
    out: list[int] = []
    queue = [pid]
    while queue:
        parent = queue.pop(0)
        kids = _children(parent) if table is None else table.get(parent, [])
        if kids is None:
            table = _parents()
            kids = table.get(parent, [])
        for child in sorted(kids):
            if child not in seen:
                seen.add(child)
                out.append(child)
                queue.append(child)
    return out


def _names(process: ProcessInfo) -> set[str]:
    names = {process.name}
    for arg in process.argv[:2]:  # "codex ..." or "node .../bin/codex.js ..."
        names.add(arg.rsplit("/", 1)[-1])
    return {n for n in names if n}


def agent_process(kind: str, tree: Sequence[ProcessInfo]) -> ProcessInfo | None:
    """The agent among the registered process and its descendants (parents first): the outermost
    one named after its kind (codex, codex.js, codex-x86_64-...; a nested `codex exec` is deeper),
    else the first that is not a shell (what the pane's shell runs), else the registered one."""
    named = re.compile(rf"{re.escape(kind)}([-._].*)?")
    for process in tree:
        if any(named.fullmatch(n) for n in _names(process)):
            return process
    for process in tree:
        if process.name not in SHELLS:
            return process
    return tree[0] if tree else None


def agent_world(pid: int, kind: str) -> tuple[AgentWorld, bool] | None:
    """The environment and directory of the agent that runs as `pid` or under it (the registered
    pid may be the pane's shell, or a wrapper such as `env K=V codex`), read from /proc; and
    whether that process is the agent itself rather than the shell it left behind. None when no
    process of the tree can be read (gone, or not ours: its environment is withheld)."""
    if pid <= 0:
        return None
    tree = [p for p in (process_info(q) for q in [pid, *descendants(pid)]) if p is not None]
    agent = agent_process(kind, tree)
    if agent is None or not agent.env:
        return None
    world = AgentWorld(env=dict(agent.env), cwd=agent.cwd, pid=agent.pid, source=f"its process {agent.pid}")
    return world, agent.name not in SHELLS
