"""Admission of capture requests: merge keys, priority-queue order, rate limits, input backoff.

Pure: the rate limiter holds its sliding windows as plain lists of epoch milliseconds that the
caller may snapshot and restore; nothing here reads a clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from kronii.capture.core.request import Bypass, CaptureSpec, Priority

# Requests from one requester for one target within this window share a job.
MERGE_WINDOW_MS = 2_000
RATE_WINDOW_MS = 60_000

# Lower score pops first (Redis ZPOPMIN). Each priority owns a band wider than any epoch-ms
# timestamp before the year 5138, so every high job precedes every normal one, and arrival
# time orders jobs inside a band. The largest score (3e14) is far below 2**53, so floats stay exact.
_PRIORITY_BAND = 10**14
_BAND_INDEX: Mapping[Priority, int] = MappingProxyType(
    {Priority.HIGH: 0, Priority.NORMAL: 1, Priority.LOW: 2}
)


def merge_key(spec: CaptureSpec) -> str:
    """The identity under which concurrent requests merge: requester plus target window.

    focus_next has no target, so all of one requester's focus_next requests merge. `|` cannot
    occur in a requester (see request.REQUESTER_PATTERN), so keys never collide across fields.
    """
    if spec.bypass is Bypass.FOCUS_NEXT:
        return f"{spec.requester}|focus_next"
    return f"{spec.requester}|{spec.process_id}|{spec.app_start_time_ms}|{spec.window_id}"


def queue_score(priority: Priority, enqueued_ms: int) -> float:
    """Sorted-set score: high before normal before low, first in first out within a priority."""
    if not 0 <= enqueued_ms < _PRIORITY_BAND:
        raise ValueError(f"enqueued_ms must be between 0 and {_PRIORITY_BAND - 1}, got {enqueued_ms}.")
    return float(_BAND_INDEX[priority] * _PRIORITY_BAND + enqueued_ms)


@dataclass(frozen=True, slots=True)
class RateLimits:
    global_per_minute: int = 30
    per_app_per_minute: int = 10
    # While the user typed or moved the mouse within this long, a capture waits: mid-keystroke
    # frames are the least useful ones and the most likely to show a half-typed secret.
    input_backoff_ms: int = 1_500

    def __post_init__(self) -> None:
        if self.global_per_minute < 1:
            raise ValueError("global_per_minute must be at least 1.")
        if self.per_app_per_minute < 1:
            raise ValueError("per_app_per_minute must be at least 1.")
        if self.input_backoff_ms < 0:
            raise ValueError("input_backoff_ms must not be negative.")


@dataclass(frozen=True, slots=True)
class Admission:
    allowed: bool
    retry_after_ms: int = 0
    reason: str = ""


@dataclass(slots=True)
class RateLimiter:
    """Sliding one-minute windows, global and per app (app names compared case-insensitively).

    `check` answers without changing anything; `record` counts a capture that was admitted.
    An empty app name (focus_next, target not yet known) counts only against the global limit.
    """

    limits: RateLimits = field(default_factory=RateLimits)
    global_hits: list[int] = field(default_factory=list)
    app_hits: dict[str, list[int]] = field(default_factory=dict)

    def check(self, now_ms: int, app_name: str) -> Admission:
        self._prune(now_ms)
        if len(self.global_hits) >= self.limits.global_per_minute:
            return Admission(
                allowed=False,
                retry_after_ms=self._retry_after(self.global_hits, self.limits.global_per_minute, now_ms),
                reason=f"global rate limit of {self.limits.global_per_minute} captures per minute reached",
            )
        key = _app_key(app_name)
        hits = self.app_hits.get(key, []) if key else []
        if len(hits) >= self.limits.per_app_per_minute:
            return Admission(
                allowed=False,
                retry_after_ms=self._retry_after(hits, self.limits.per_app_per_minute, now_ms),
                reason=f"rate limit of {self.limits.per_app_per_minute} captures per minute for this app reached",
            )
        return Admission(allowed=True)

    def record(self, now_ms: int, app_name: str) -> None:
        self._prune(now_ms)
        self.global_hits.append(now_ms)
        key = _app_key(app_name)
        if key:
            self.app_hits.setdefault(key, []).append(now_ms)

    def _retry_after(self, hits: list[int], limit: int, now_ms: int) -> int:
        # The window frees a slot when the oldest hit that keeps it full slides out.
        oldest_blocking = sorted(hits)[len(hits) - limit]
        return max(1, oldest_blocking + RATE_WINDOW_MS - now_ms)

    def _prune(self, now_ms: int) -> None:
        horizon = now_ms - RATE_WINDOW_MS
        self.global_hits[:] = [at for at in self.global_hits if at > horizon]
        for key in list(self.app_hits):
            kept = [at for at in self.app_hits[key] if at > horizon]
            if kept:
                self.app_hits[key] = kept
            else:
                # Apps seen once must not grow the state for the life of the service.
                del self.app_hits[key]


def _app_key(app_name: str) -> str:
    return app_name.strip().casefold()


def input_backoff_ms(last_input_ms: int | None, now_ms: int, limits: RateLimits) -> int:
    """How long to wait before capturing, given the last user input the sensor saw (0 = go now)."""
    if last_input_ms is None:
        return 0
    quiet_for = now_ms - last_input_ms
    return max(0, limits.input_backoff_ms - quiet_for)
