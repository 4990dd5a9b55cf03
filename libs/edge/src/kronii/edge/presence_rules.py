"""A person's proof of presence before a local process may do something sensitive (seed 000,
"Human-in-the-loop for kronictl"), as plain values and functions: what the proof is for, the TTY
binding's cross-check, the key of the short window a proof opens, and the sentences of a refusal.

The TTY binding is not a strong guarantee (a process on the person's terminal can pass it); it
keeps headless processes out, and a caller that names a terminal or a session that is not its own
is refused. The gate that asks polkit or checks the binding is :mod:`kronii.edge.presence`.
"""

from __future__ import annotations

from dataclasses import dataclass

from kronii.edge.peers import ProcFacts

# gRPC metadata a client sends for the TTY binding: its terminal (ttyname of standard input) and
# its session id (getsid).
TTY_HEADER = "kronii-tty"
SESSION_HEADER = "kronii-session"

__all__ = [
    "SESSION_HEADER",
    "TTY_HEADER",
    "PresencePurpose",
    "TtyClaim",
    "polkit_refusal",
    "tty_refusal",
    "window_key",
]


@dataclass(frozen=True)
class PresencePurpose:
    """What a service asks a person's presence for, in its own words.

    ``service`` names the audit action (``<service>.presence``), the Redis key prefix of the open
    windows (``kronii:<service>:presence:``) and the log lines; ``polkit_action`` is the action id
    polkit is asked about; ``doing`` and ``to_do`` fill the refusals ("reading screenshots needs a
    person at a terminal", "polkit does not allow this user to read screenshots"); ``command`` is
    what the person runs from a terminal; ``grants`` are the capability names a proof's window
    carries, in the service's order (its audit rows list them so)."""

    service: str
    polkit_action: str
    doing: str
    to_do: str
    command: str
    grants: tuple[str, ...]

    @property
    def audit_action(self) -> str:
        return f"{self.service}.presence"

    @property
    def window_prefix(self) -> str:
        return f"kronii:{self.service}:presence:"


@dataclass(frozen=True)
class TtyClaim:
    """What the client says: its terminal (as named and as the device it names) and its session.

    ``device`` is None when the name is not a terminal device under /dev."""

    name: str
    device: tuple[int, int] | None
    session: int | None


def tty_refusal(claim: TtyClaim | None, facts: ProcFacts, purpose: PresencePurpose) -> str | None:
    """Why the TTY binding refuses (a sentence), or None when claim and kernel agree."""
    if claim is None or not claim.name:
        return (
            f"{purpose.doing} needs a person at a terminal: run {purpose.command} from an "
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


def polkit_refusal(purpose: PresencePurpose, *, challenge: bool) -> str:
    """Why polkit's "not authorized" refuses: nobody authenticated (``challenge``), or never allowed."""
    if challenge:
        return (
            f"polkit did not authorize {purpose.doing}: nobody confirmed with their password "
            "(no authentication agent asked, or it was dismissed)"
        )
    return f"polkit does not allow this user to {purpose.to_do}"


def window_key(facts: ProcFacts) -> str:
    """Which callers share a person's window once it is open.

    On a terminal: every process of the same user in the same session on the same terminal (the
    CLI run again from that shell), the session leader's start time guarding against a reused
    session id. Without a terminal (a polkit proof from a desktop launcher): that process alone."""
    if facts.tty is not None and facts.leader_start_ticks is not None:
        major, minor = facts.tty
        return f"tty:{facts.uid}:{facts.session}:{facts.leader_start_ticks}:{major}.{minor}"
    return f"pid:{facts.uid}:{facts.pid}:{facts.start_ticks}"
