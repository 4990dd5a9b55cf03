"""The Privacy page as pure data: each place kronii keeps something about the person (what, where,
for how long, how much), the audit log's tail and its chain check, and what a delete did, said in a
sentence. No I/O."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kronii.console.core.captures import Forgotten, human_bytes
from kronii.foundation.errors import InvalidArgument

__all__ = [
    "MAX_APP_CHARS",
    "AuditEntry",
    "ChainCheck",
    "DayDeleted",
    "Kept",
    "TableSize",
    "check_app",
]

MAX_APP_CHARS = 256


@dataclass(frozen=True)
class TableSize:
    """A PostgreSQL table's rows and bytes on disk (with its indexes)."""

    table: str
    rows: int
    bytes: int


@dataclass(frozen=True)
class Kept:
    """One place the person's data is kept."""

    what: str
    where: str
    how_long: str
    rows: int | None
    bytes: int | None
    note: str = ""

    @property
    def size(self) -> str:
        if self.bytes is None:
            return "unknown"
        rows = "" if self.rows is None else f"{self.rows:,} {'row' if self.rows == 1 else 'rows'}, "
        return f"{rows}{human_bytes(self.bytes)} on disk"


@dataclass(frozen=True)
class AuditEntry:
    id: int
    at: float
    service: str
    actor: str
    action: str
    subject: str
    outcome: str


@dataclass(frozen=True)
class ChainCheck:
    rows_checked: int
    first_broken_id: int | None
    reason: str
    # True when this look walked from the first row; False when it went on from the last look's end.
    whole: bool = True

    @property
    def ok(self) -> bool:
        return self.first_broken_id is None

    def sentence(self) -> str:
        if self.ok:
            since = "" if self.whole else " (the rows before were checked on an earlier look)"
            return (
                f"The chain holds: {self.rows_checked:,} rows checked, each linked to the one before{since}."
            )
        return f"The chain is broken at row {self.first_broken_id}: {self.reason}."


@dataclass(frozen=True)
class DayDeleted:
    """What a delete did: the sensor's spans and events, capture's frames and the pipeline's decisions
    (None: not asked, or its service did not answer, said in `problems`)."""

    day: str
    spans: int | None
    events: int | None
    frames: Forgotten | None
    problems: tuple[str, ...] = ()
    decisions: int | None = None

    def sentence(self) -> str:
        parts: list[str] = []
        if self.spans is not None:
            parts += [f"{self.spans} activity spans", f"{self.events or 0} raw events"]
        if self.frames is not None:
            noun = "frame" if self.frames.deleted == 1 else "frames"
            parts.append(
                f"{self.frames.deleted} {noun} ({self.frames.files_removed} files removed from disk)"
            )
        if self.decisions is not None:
            parts.append(
                f"{self.decisions} {'decision' if self.decisions == 1 else 'decisions'} of the pipeline"
            )
        listed = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else "".join(parts)
        said = f"{self.day}: deleted {listed}." if parts else f"{self.day}: nothing deleted."
        if self.problems:
            said += " Not done: " + "; ".join(self.problems) + "."
        return said


def check_app(name: str) -> str:
    name = name.strip()
    if not name or len(name) > MAX_APP_CHARS:
        raise InvalidArgument(f"name the app (1 to {MAX_APP_CHARS} characters)")
    return name


def total_bytes(kept: Sequence[Kept]) -> int:
    return sum(item.bytes or 0 for item in kept)
