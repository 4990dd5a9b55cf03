"""Global and per-app rate limits (seed 000, additional guard 2): checked before entering Routing
(runs) and before issuing a CaptureRequest (captures). Sliding windows over plain data: a
`RateLedger` is immutable, `record` returns the next one, and the caller stores it where it likes."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RateLimits:
    global_max: int
    global_window_ms: int
    per_app_max: int
    per_app_window_ms: int

    def __post_init__(self) -> None:
        if (
            min(self.global_max, self.per_app_max) < 0
            or min(self.global_window_ms, self.per_app_window_ms) <= 0
        ):
            raise ValueError("rate limits need counts >= 0 and windows > 0 ms")


# A round costs model calls: at most 12 an hour overall and 4 per app keeps a busy day cheap.
DEFAULT_RUN_LIMITS = RateLimits(
    global_max=12, global_window_ms=3_600_000, per_app_max=4, per_app_window_ms=3_600_000
)
# Screenshots are the most sensitive input: a few per hour, one per app per 10 minutes.
DEFAULT_CAPTURE_LIMITS = RateLimits(
    global_max=6, global_window_ms=3_600_000, per_app_max=1, per_app_window_ms=600_000
)


@dataclass(frozen=True, slots=True)
class RateVerdict:
    allowed: bool
    reason: str = ""
    # When the refusing window frees a slot (0 when allowed).
    retry_after_ms: int = 0


@dataclass(frozen=True, slots=True)
class RateLedger:
    """(app, at_ms) of every recorded event still inside the longer of the two windows."""

    events: tuple[tuple[str, int], ...] = ()

    def record(self, app: str, now_ms: int, limits: RateLimits) -> RateLedger:
        horizon = max(limits.global_window_ms, limits.per_app_window_ms)
        kept = tuple((a, t) for a, t in self.events if now_ms - t < horizon)
        return RateLedger((*kept, (app, now_ms)))


def _retry_after(times: list[int], limit: int, window_ms: int, now_ms: int) -> int:
    # The window frees a slot when the oldest event that keeps it full leaves it.
    if limit == 0 or not times:
        return window_ms
    blocking = sorted(times)[-limit]
    return max(1, blocking + window_ms - now_ms)


def check(ledger: RateLedger, app: str, now_ms: int, limits: RateLimits) -> RateVerdict:
    """Whether one more event for `app` fits both the global and the app's sliding window."""
    in_global = [t for _, t in ledger.events if now_ms - t < limits.global_window_ms]
    if len(in_global) >= limits.global_max:
        wait = _retry_after(in_global, limits.global_max, limits.global_window_ms, now_ms)
        return RateVerdict(
            False, f"global limit {limits.global_max} per {limits.global_window_ms} ms reached", wait
        )
    in_app = [t for a, t in ledger.events if a == app and now_ms - t < limits.per_app_window_ms]
    if len(in_app) >= limits.per_app_max:
        wait = _retry_after(in_app, limits.per_app_max, limits.per_app_window_ms, now_ms)
        return RateVerdict(
            False,
            f"limit {limits.per_app_max} per {limits.per_app_window_ms} ms reached for app {app!r}",
            wait,
        )
    return RateVerdict(True)
