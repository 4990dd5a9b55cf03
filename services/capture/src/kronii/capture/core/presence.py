"""A person's proof of presence before reading screenshots (seed 000, "Human-in-the-loop for
kronictl"): the TTY binding's cross-check and the key of the short read-only window, as plain
functions of what /proc says about the caller and what the caller claims.

The TTY binding is not a strong guarantee (a process on the person's terminal can pass it); it
keeps headless processes out, and a caller that names a terminal or a session that is not its own
is refused.
"""

from __future__ import annotations

from dataclasses import dataclass

# gRPC metadata a client sends for the TTY binding: its terminal (ttyname of standard input) and
# its session id (getsid).
TTY_HEADER = "kronii-tty"
SESSION_HEADER = "kronii-session"

__all__ = [
    "SESSION_HEADER",
    "TTY_HEADER",
    "ProcFacts",
    "TtyClaim",
    "decode_tty_nr",
    "tty_refusal",
    "window_key",
]


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


@dataclass(frozen=True)
class TtyClaim:
    """What the client says: its terminal (as named and as the device it names) and its session.

    ``device`` is None when the name is not a terminal device under /dev."""

    name: str
    device: tuple[int, int] | None
    session: int | None


def decode_tty_nr(tty_nr: int) -> tuple[int, int] | None:
    """(major, minor) from /proc/<pid>/stat's tty_nr (the kernel's new_encode_dev); None for 0."""
    if tty_nr == 0:
        return None
    major = (tty_nr >> 8) & 0xFFF
    minor = (tty_nr & 0xFF) | ((tty_nr >> 12) & 0xFFF00)
    return major, minor


def tty_refusal(claim: TtyClaim | None, facts: ProcFacts) -> str | None:
    """Why the TTY binding refuses (a sentence), or None when claim and kernel agree."""
    if claim is None or not claim.name:
        return (
            "reading screenshots needs a person at a terminal: run kronii capture from an "
            "interactive terminal (its standard input is not a terminal)"
        )
    if facts.tty is None:
        return "the calling process has no controlling terminal, so no person can be shown to be there"
    if claim.device is None:
        return "the terminal the client names is not a terminal device"
    if claim.device != facts.tty:
        return "the terminal the client names is not the calling process's own terminal"
    if claim.session != facts.session:
        return "the session the client names is not the calling process's own session"
    if facts.stdin != facts.tty:
        return "the calling process's standard input is not its terminal"
    return None


def window_key(facts: ProcFacts) -> str:
    """Which callers share a person's read-only window once it is open.

    On a terminal: every process of the same user in the same session on the same terminal (the
    CLI run again from that shell), the session leader's start time guarding against a reused
    session id. Without a terminal (a polkit proof from a desktop launcher): that process alone."""
    if facts.tty is not None and facts.leader_start_ticks is not None:
        major, minor = facts.tty
        return f"tty:{facts.uid}:{facts.session}:{facts.leader_start_ticks}:{major}.{minor}"
    return f"pid:{facts.uid}:{facts.pid}:{facts.start_ticks}"
