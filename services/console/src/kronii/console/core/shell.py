"""The Shell page as pure data: the critic's records (redacted by the critic before it keeps them),
a search hit with how close it was, the hint a record raised (its trigger, in words), the clusters of
near-duplicate failures, and the plain-text match used by "search by text". No I/O."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kronii.foundation.errors import InvalidArgument

__all__ = [
    "HINT_WORDS",
    "MAX_QUERY_CHARS",
    "Cluster",
    "SearchMode",
    "ShellHit",
    "ShellRecord",
    "check_query",
    "text_matches",
]

MAX_QUERY_CHARS = 200
SearchMode = str  # "meaning" (the critic's own search) | "text" (the words as written)
MODES = ("meaning", "text")
# The hint the critic gave at the prompt, by the trigger it keeps with the record.
HINT_WORDS = {
    "ok": "",
    "error": "failed (what fixed it before, if known)",
    "command_not_found": "command not found (a close name or its package)",
    "secret": "a secret was typed on the command line (kept masked)",
    "dangerous": "dangerous (a warning before it ran)",
    "repeated_failure": "the same failure again (the earlier ones)",
}


@dataclass(frozen=True)
class ShellRecord:
    record_id: str
    at: float
    command_line: str
    cwd: str
    exit_status: int
    duration_ms: int
    shell: str
    trigger: str
    error_type: str
    error_message: str
    summary: str
    redactions: int

    @property
    def failed(self) -> bool:
        return self.exit_status != 0

    @property
    def hint(self) -> str:
        return HINT_WORDS.get(self.trigger, self.trigger.replace("_", " "))


@dataclass(frozen=True)
class ShellHit:
    record: ShellRecord
    similarity: float
    score: float
    tier: str
    cluster_id: str = ""


@dataclass(frozen=True)
class Cluster:
    """Failures the critic's nightly job found to be near-duplicates, led by the first of them."""

    cluster_id: str
    day: str
    command_line: str
    error_message: str
    record_ids: tuple[str, ...]


def check_query(text: str, mode: str) -> tuple[str, str]:
    text = " ".join(text.split())
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidArgument(f"a search is at most {MAX_QUERY_CHARS} characters")
    if mode not in MODES:
        raise InvalidArgument("search by meaning or by text")
    return text, mode


def text_matches(record: ShellRecord, words: Sequence[str]) -> bool:
    """Every word appears (case-insensitive) in the command line, the error or its summary."""
    haystack = " ".join((record.command_line, record.error_message, record.summary, record.cwd)).lower()
    return all(word.lower() in haystack for word in words)
