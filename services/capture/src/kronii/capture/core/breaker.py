"""Per-client circuit breaker against abuse (seed 000: "Automatic circuit-breaker on abuse").

Closed: calls pass; failures (bad tokens, refused requests) are counted in a sliding window.
`failure_threshold` failures within `window_ms` open the breaker for `open_ms`: every call is
refused. After that it is half open: calls pass again, and the next outcome decides: a success
closes it and forgets the failures, a failure opens it again at once.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class BreakerState(enum.StrEnum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


@dataclass(slots=True)
class _Client:
    failures: list[int] = field(default_factory=list)
    open_until_ms: int | None = None
    last_reason: str = ""


class CircuitBreaker:
    def __init__(self, failure_threshold: int = 5, window_ms: int = 60_000, open_ms: int = 120_000) -> None:
        if failure_threshold < 1:
            raise ValueError("failure_threshold must be at least 1.")
        if window_ms < 1 or open_ms < 1:
            raise ValueError("window_ms and open_ms must be positive.")
        self.failure_threshold = failure_threshold
        self.window_ms = window_ms
        self.open_ms = open_ms
        self._clients: dict[str, _Client] = {}

    def state(self, client_key: str, now_ms: int) -> BreakerState:
        client = self._clients.get(client_key)
        if client is None or client.open_until_ms is None:
            return BreakerState.CLOSED
        if now_ms < client.open_until_ms:
            return BreakerState.OPEN
        return BreakerState.HALF_OPEN

    def allow(self, client_key: str, now_ms: int) -> bool:
        return self.state(client_key, now_ms) is not BreakerState.OPEN

    def retry_after_ms(self, client_key: str, now_ms: int) -> int:
        """How long an open breaker stays open (0 when calls pass)."""
        client = self._clients.get(client_key)
        if client is None or client.open_until_ms is None:
            return 0
        return max(0, client.open_until_ms - now_ms)

    def last_reason(self, client_key: str) -> str:
        """Why the client's last failure was recorded (for the audit row of a refused call)."""
        client = self._clients.get(client_key)
        return client.last_reason if client is not None else ""

    def record_failure(self, client_key: str, now_ms: int, reason: str) -> BreakerState:
        """Count a failure; returns the state after it (OPEN when this failure tripped it)."""
        before = self.state(client_key, now_ms)
        client = self._clients.setdefault(client_key, _Client())
        client.last_reason = reason
        if before is BreakerState.OPEN:
            # Hammering an open breaker does not extend it; the open period is the penalty.
            return before
        if before is BreakerState.HALF_OPEN:
            client.failures = [now_ms]
            client.open_until_ms = now_ms + self.open_ms
            return BreakerState.OPEN
        horizon = now_ms - self.window_ms
        client.failures = [at for at in client.failures if at > horizon]
        client.failures.append(now_ms)
        if len(client.failures) >= self.failure_threshold:
            client.open_until_ms = now_ms + self.open_ms
            return BreakerState.OPEN
        return BreakerState.CLOSED

    def record_success(self, client_key: str, now_ms: int) -> BreakerState:
        """A success in half-open closes the breaker; in closed it leaves the failure count alone
        (so one good call between bad ones does not reset an attack); in open it changes nothing."""
        state = self.state(client_key, now_ms)
        if state is BreakerState.HALF_OPEN:
            del self._clients[client_key]
            return BreakerState.CLOSED
        return state

    def forget_idle(self, now_ms: int) -> int:
        """Drop closed clients with no failure inside the window; returns how many were dropped.
        Call it now and then so clients seen once do not grow the state forever."""
        horizon = now_ms - self.window_ms
        idle = [
            key
            for key, client in self._clients.items()
            if client.open_until_ms is None and all(at <= horizon for at in client.failures)
        ]
        for key in idle:
            del self._clients[key]
        return len(idle)
