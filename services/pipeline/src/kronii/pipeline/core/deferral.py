"""When a Deferred round may resume (seed rows 2, 3, 10, 18): a lock defers until LockEnd or a long
Tick; red risk, a Defer route or a refused rate limit defer for a short backoff."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

SHORT_BACKOFF_MS = 60_000
# The safety net for a lost LockEnd: a Tick this long after the lock resumes intake anyway.
LONG_TICK_MS = 30 * 60_000


class DeferReason(StrEnum):
    LOCKED = "locked"
    RISK_RED = "risk_red"
    FOCUS_THRASH = "focus_thrash"
    TITLE_CHURN = "title_churn"
    LOW_VALUE = "low_value"
    REPEATED = "repeated"
    PRIVACY = "privacy"
    RATE_LIMITED = "rate_limited"


@dataclass(frozen=True, slots=True)
class Deferral:
    reason: DeferReason
    since_ms: int
    resume_at_ms: int


def defer(reason: DeferReason, now_ms: int, backoff_ms: int = SHORT_BACKOFF_MS) -> Deferral:
    """A deferral starting now. A lock waits for LockEnd, with the long tick as its backoff."""
    wait_ms = LONG_TICK_MS if reason is DeferReason.LOCKED else backoff_ms
    return Deferral(reason=reason, since_ms=now_ms, resume_at_ms=now_ms + max(0, wait_ms))


def deferral_over(deferral: Deferral, now_ms: int, locked: bool, long_tick_ms: int = LONG_TICK_MS) -> bool:
    """`Facts.deferral_over` for a Tick. While the screen is locked only the long tick resumes,
    whatever the deferral's reason: nothing of a locked desktop is worth a round."""
    if locked:
        return now_ms - deferral.since_ms >= long_tick_ms
    return now_ms >= deferral.resume_at_ms
