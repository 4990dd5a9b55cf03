"""The values the engine hands out: levels, findings, results. None of them ever holds a matched value."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["ENGINE_ERROR_TEXT", "WITHHELD_TEXT", "Finding", "Level", "RedactionResult"]

# What a caller gets instead of text when the engine failed: never the original (fail closed).
ENGINE_ERROR_TEXT = "[REDACTED: engine error]"
# What a caller gets for content that must not leave at all, e.g. a password manager's window.
WITHHELD_TEXT = "[REDACTED: withheld]"


class Level(StrEnum):
    """How sensitive a piece of content is after redaction."""

    GREEN = "green"  # nothing found
    AMBER = "amber"  # findings masked; the redacted text may leave
    RED = "red"  # must not leave at all, not even redacted


@dataclass(frozen=True, slots=True)
class Finding:
    """Where a sensitive value was, and what it was, without the value itself.

    `start`/`end` index the original text (end exclusive); `placeholder` is what replaced it.
    The generated repr shows only these fields, so a finding is safe to log.
    """

    type: str
    start: int
    end: int
    detector: str
    confidence: float
    placeholder: str = ""

    @property
    def span(self) -> tuple[int, int]:
        return (self.start, self.end)

    def __len__(self) -> int:
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class RedactionResult:
    """The redacted text, its level and why, and the findings (types and spans only)."""

    text: str
    level: Level
    reason: str
    findings: tuple[Finding, ...] = ()
    masked_share: float = 0.0

    @property
    def may_leave(self) -> bool:
        """Whether `text` may cross a process boundary (logs, NATS, an LLM prompt)."""
        return self.level is not Level.RED
