"""The seed's records (seed 003, "Capture & Summarise" and "Index / Store"): what a shell hook
reports (InvocationEvent) and the one schema kept in RAM, in the daily files and in PostgreSQL
(InvocationRecord). Plain values; every text in a record is already redacted."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

__all__ = ["EMBEDDING_DIM", "InvocationEvent", "InvocationRecord", "Trigger"]

EMBEDDING_DIM = 384


class Trigger(enum.StrEnum):
    """Why a record is interesting (the seed's Trigger field); one per record, the strongest."""

    OK = "ok"
    ERROR = "error"
    COMMAND_NOT_FOUND = "command_not_found"
    SECRET = "secret"  # noqa: S105 (a trigger name, not a password)
    DANGEROUS = "dangerous"
    REPEATED_FAILURE = "repeated_failure"


@dataclass(frozen=True)
class InvocationEvent:
    """One command as a shell hook saw it: the line, where, how it ended. ``error_text`` only from
    the opt-in paths (a supervisor-owned pane, `kronii run -- CMD`). Times in ms since the epoch.
    ``event_id``: the command's own id where the source has one (a spool line's place in the spool
    it was read from), so that the same command read twice is kept once, under that id; "" for none
    (the record gets a fresh one)."""

    shell: str  # "bash" | "zsh" | "fish" | "run" | "pane"
    session: str  # the shell's own session key (pid and start), for hints back to that prompt
    tty: str
    cwd: str
    command_line: str
    exit_status: int
    started_ms: int
    duration_ms: int
    error_text: str = ""
    event_id: str = ""


@dataclass(frozen=True)
class InvocationRecord:
    """The seed's InvocationRecord plus what kronii adds (cwd, exit status, duration, session).
    ``embedding`` is unit-normalised (384 floats) or empty when no model ran; ``redactions`` counts
    the placeholders the redaction engine put in."""

    record_id: str
    timestamp_ms: int
    trigger: Trigger
    command_name: str
    command_line: str
    cwd: str
    exit_status: int
    duration_ms: int
    shell: str
    session: str
    error_type: str = ""
    error_message: str = ""
    summary: str = ""
    redactions: int = 0
    embedding: tuple[float, ...] = field(default=(), repr=False)

    @property
    def failed(self) -> bool:
        return self.exit_status != 0
