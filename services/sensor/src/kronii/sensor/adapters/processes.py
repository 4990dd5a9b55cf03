"""What /proc says about the process that owns a window: its start time (which tells a reused pid
from the original) and its program name (which tells a prompter from an app)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

__all__ = ["ProcessReader", "parse_boot_time", "parse_start_ticks", "start_time_ms"]

log = logging.getLogger(__name__)


def parse_start_ticks(pid_stat: str) -> int:
    """Field 22 (`starttime`, clock ticks after boot) of a /proc/<pid>/stat line.

    The command name (field 2) is in parentheses and may itself hold spaces and ')', so fields are
    counted from the last ')'.
    """
    close = pid_stat.rfind(")")
    if close < 0:
        raise ValueError("not a /proc/<pid>/stat line: no ')' after the command name")
    after_comm = pid_stat[close + 1 :].split()
    # after_comm[0] is field 3 (state), so field 22 sits at index 22 - 3.
    index = 22 - 3
    if len(after_comm) <= index:
        raise ValueError(f"/proc/<pid>/stat line has {len(after_comm) + 2} fields, need at least 22")
    return int(after_comm[index])


def parse_boot_time(proc_stat: str) -> int:
    """`btime` (boot time, epoch seconds) from the text of /proc/stat."""
    for line in proc_stat.splitlines():
        if line.startswith("btime "):
            return int(line.split()[1])
    raise ValueError("/proc/stat has no btime line")


def start_time_ms(start_ticks: int, boot_time_s: int, clk_tck: int) -> int:
    """Epoch milliseconds of a process start, from its start ticks, the boot time and SC_CLK_TCK."""
    if clk_tck <= 0:
        raise ValueError(f"clock ticks per second must be positive, got {clk_tck}")
    return boot_time_s * 1000 + start_ticks * 1000 // clk_tck


class ProcessReader:
    """Reads process start times and program names (not a clock: the time is the kernel's record of
    when a process began, read from /proc). Boot time is read once: the kernel recomputes btime from the wall
    clock on every read and it can shift by a second, which would make one process look like two."""

    def __init__(self, proc_root: Path = Path("/proc")) -> None:
        self._proc_root = proc_root
        self._clk_tck = os.sysconf("SC_CLK_TCK")
        try:
            self._boot_time_s: int | None = parse_boot_time((proc_root / "stat").read_text())
        except (OSError, ValueError) as exc:
            log.info("no boot time from %s/stat (%s); app start times will be 0", proc_root, exc)
            self._boot_time_s = None

    def start_time_ms(self, pid: int) -> int:
        if pid <= 0 or self._boot_time_s is None:
            return 0
        try:
            ticks = parse_start_ticks((self._proc_root / str(pid) / "stat").read_text())
        except (OSError, ValueError):
            # The process exited, or it lives in another pid namespace or on another host.
            return 0
        return start_time_ms(ticks, self._boot_time_s, self._clk_tck)

    def program(self, pid: int) -> str:
        """The basename of the process's argv[0] ("gcr-prompter"); "" when unknown."""
        if pid <= 0:
            return ""
        try:
            argv0 = (self._proc_root / str(pid) / "cmdline").read_bytes().split(b"\0", 1)[0]
        except OSError:
            return ""
        return os.path.basename(argv0.decode("utf-8", errors="replace"))
