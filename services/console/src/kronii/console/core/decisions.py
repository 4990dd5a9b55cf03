"""The Decisions page as pure data: a pipeline run as the person reads it (what woke it, the route it
took, how redacted its context was, which roles ran and whether rules or a model answered, any
fallback, the cost) and why it notified or stayed silent, in a sentence. No I/O."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from kronii.foundation.errors import InvalidArgument

__all__ = [
    "SNOOZE_CHOICES",
    "Control",
    "Decision",
    "RoleRun",
    "check_id",
    "check_snooze",
    "why",
]

# The pipeline's and its notifications' ids, as a path may carry them.
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")
# The snoozes the page offers, in seconds (the pipeline takes up to 7 days).
SNOOZE_CHOICES = (3600, 4 * 3600, 86400)
RULES_BACKEND = "rules"


@dataclass(frozen=True)
class RoleRun:
    role: str
    backend: str
    model: str
    outcome: str
    fallback: str
    cost: float
    latency_ms: int

    @property
    def by_rules(self) -> bool:
        return self.backend == RULES_BACKEND

    @property
    def answered_by(self) -> str:
        if self.by_rules:
            return "rules"
        return f"model ({self.model or self.backend})"


@dataclass(frozen=True)
class Decision:
    run_id: str
    created_at: float
    trigger: str
    route: str
    redaction_level: str
    roles: tuple[RoleRun, ...]
    cost: float
    decision: str  # notify | silent | deferred:<reason> | failed | "" (still running)
    notes: tuple[str, ...]
    notification_id: str
    states: tuple[str, ...]
    duration_ms: int | None

    @property
    def outcome(self) -> str:
        """notified, silent, deferred, failed or running: what the row's badge says."""
        if not self.decision:
            return "running"
        if self.decision == "notify":
            return "notified"
        return self.decision.split(":", 1)[0]

    @property
    def fallbacks(self) -> tuple[str, ...]:
        return tuple(f"{role.role}: {role.fallback}" for role in self.roles if role.fallback)

    @property
    def why(self) -> str:
        return why(self.decision, self.notes, self.roles)


@dataclass(frozen=True)
class Control:
    """A snooze or a mute in force on a notification's source."""

    source_key: str
    snoozed_until: float | None
    muted: bool
    notification_id: str


def why(decision: str, notes: Sequence[str], roles: Sequence[RoleRun]) -> str:
    """Why the run notified or stayed silent, in one sentence, from its decision and its notes."""
    said = "; ".join(note for note in notes if note)
    if decision == "notify":
        base = "It notified: the planner judged the suggestion worth the interruption"
    elif decision == "silent":
        base = "It stayed silent"
        if not said:
            base += ": the planner found nothing worth an interruption"
    elif decision.startswith("deferred:"):
        base = f"It waited ({decision.split(':', 1)[1].replace('_', ' ')})"
    elif decision == "failed":
        failed = [role.role for role in roles if role.outcome not in ("ok", "")]
        base = "It failed" + (f" in {', '.join(failed)}" if failed else "")
    else:
        base = "It is still running"
    return f"{base} ({said})." if said else f"{base}."


def check_id(value: str, what: str) -> str:
    value = value.strip()
    if not _ID.fullmatch(value):
        raise InvalidArgument(f"{what} must be 1 to 128 letters, digits or ._:@-")
    return value


def check_snooze(seconds: int) -> int:
    if seconds not in SNOOZE_CHOICES:
        raise InvalidArgument("snooze for 1 hour, 4 hours or 1 day")
    return seconds
