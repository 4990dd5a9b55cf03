"""The embedding jobs' values (core): how a job ended, its result, the queue's counts, and the CPU
budget the worker keeps (a sliding window over CPU seconds; the times are passed in)."""

from __future__ import annotations

import enum
from collections import deque
from dataclasses import dataclass

__all__ = ["CpuBudget", "EmbeddingResult", "JobOutcome", "QueueStats"]


class JobOutcome(enum.StrEnum):
    EMBEDDED = "embedded"
    DROPPED = "dropped"  # pushed out by newer jobs, or still waiting when the queue stopped
    TIMED_OUT = "timed_out"  # not done within the per-job time cap (waiting included)
    UNAVAILABLE = "unavailable"  # no model: keyword retrieval only
    FAILED = "failed"


@dataclass(frozen=True)
class EmbeddingResult:
    key: str
    vector: tuple[float, ...]  # a unit vector, or () for every outcome but EMBEDDED
    outcome: JobOutcome
    latency_s: float  # from submit() to this result


@dataclass(frozen=True)
class QueueStats:
    submitted: int
    outcomes: dict[JobOutcome, int]
    depth: int
    cpu_seconds: float  # the worker's CPU time spent embedding
    throttled_seconds: float  # time the worker slept to hold the duty cap


class CpuBudget:
    """A sliding window over the worker's CPU time: the jobs that ended within the last ``window_s``
    may together have used ``share * window_s`` CPU seconds; beyond that the next job waits until
    enough of them have left the window. One job can overshoot by its own CPU time, no more."""

    def __init__(self, share: float, window_s: float) -> None:
        if not 0 < share <= 1 or window_s <= 0:
            raise ValueError("cpu share must be in (0, 1] and the window positive")
        self._window_s = window_s
        self._allowance = share * window_s
        self._charges: deque[tuple[float, float]] = deque()  # (ended at, CPU seconds)
        self._used = 0.0

    def charge(self, cpu_seconds: float, now: float) -> None:
        self._charges.append((now, cpu_seconds))
        self._used += cpu_seconds

    def wait_before_next(self, now: float) -> float:
        """Seconds to sleep before the next job may start (0 while the window has room)."""
        while self._charges and self._charges[0][0] <= now - self._window_s:
            self._used -= self._charges.popleft()[1]
        if self._used < self._allowance:
            return 0.0
        leaving = 0.0
        for ended, cpu in self._charges:
            leaving += cpu
            if self._used - leaving < self._allowance:
                return ended + self._window_s - now
        return self._window_s  # unreachable: the loop empties the window at the latest
