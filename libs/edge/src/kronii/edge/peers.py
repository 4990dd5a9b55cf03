"""A local caller as the kernel reports it: plain values, no I/O.

:class:`PeerIdentity` is what a Unix-socket front door learns of a connection (SO_PEERCRED and
/proc); :class:`ProcFacts` is what /proc/<pid>/stat and /proc/<pid>/fd/0 say about that process, for
a person's proof of presence (:mod:`kronii.edge.presence_rules`). Read by
:mod:`kronii.edge.procinfo`, checked by :mod:`kronii.edge.local_door` and
:mod:`kronii.edge.presence`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["PeerIdentity", "ProcFacts", "decode_tty_nr"]


@dataclass(frozen=True)
class PeerIdentity:
    """A local client as the kernel reports it. ``exe`` is empty when /proc would not tell;
    ``start_ticks`` (0 when unknown) tells the process from a later one that reuses its pid."""

    uid: int
    pid: int
    exe: str
    start_ticks: int = 0

    @property
    def exe_name(self) -> str:
        """The executable's file name, for log lines (which never carry a path)."""
        return os.path.basename(self.exe) if self.exe else "?"

    @property
    def actor(self) -> str:
        return f"uid:{self.uid}"


@dataclass(frozen=True)
class ProcFacts:
    """What the kernel says about a process (/proc/<pid>/stat and /proc/<pid>/fd/0).

    ``tty`` and ``stdin`` are (major, minor) device numbers; ``tty`` is None without a controlling
    terminal, ``stdin`` is None when standard input is not a character device (or unreadable).
    ``leader_start_ticks`` is the start time of the session leader, None when it is gone."""

    pid: int
    uid: int
    session: int
    tty: tuple[int, int] | None
    start_ticks: int
    stdin: tuple[int, int] | None
    leader_start_ticks: int | None


def decode_tty_nr(tty_nr: int) -> tuple[int, int] | None:
    """(major, minor) from /proc/<pid>/stat's tty_nr (the kernel's new_encode_dev); None for 0."""
    if tty_nr == 0:
        return None
    major = (tty_nr >> 8) & 0xFFF
    minor = (tty_nr & 0xFF) | ((tty_nr >> 12) & 0xFFF00)
    return major, minor
