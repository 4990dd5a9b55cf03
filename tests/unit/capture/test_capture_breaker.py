"""Per-client circuit breaker: trips on abuse, stays open, half-opens, closes on success."""

from __future__ import annotations

import pytest
from kronii.capture.core.breaker import BreakerState, CircuitBreaker

T0 = 1_700_000_000_000


def tripped(breaker: CircuitBreaker, client: str = "pid:42") -> None:
    for i in range(breaker.failure_threshold):
        breaker.record_failure(client, T0 + i, "bad token")


def test_breaker_trips_after_threshold_failures_within_the_window() -> None:
    breaker = CircuitBreaker(failure_threshold=3, window_ms=10_000, open_ms=30_000)
    assert breaker.record_failure("c", T0, "bad token") is BreakerState.CLOSED
    assert breaker.record_failure("c", T0 + 1, "bad token") is BreakerState.CLOSED
    assert breaker.allow("c", T0 + 2)
    assert breaker.record_failure("c", T0 + 2, "bad token") is BreakerState.OPEN
    assert not breaker.allow("c", T0 + 3)
    assert breaker.state("c", T0 + 3) == "open"
    assert breaker.last_reason("c") == "bad token"
    assert breaker.retry_after_ms("c", T0 + 3) == 29_999


def test_failures_outside_the_window_do_not_add_up() -> None:
    breaker = CircuitBreaker(failure_threshold=3, window_ms=10_000)
    breaker.record_failure("c", T0, "x")
    breaker.record_failure("c", T0 + 1, "x")
    assert breaker.record_failure("c", T0 + 10_001, "x") is BreakerState.CLOSED
    assert breaker.allow("c", T0 + 10_002)


def test_one_client_tripping_leaves_others_alone() -> None:
    breaker = CircuitBreaker()
    tripped(breaker, "abuser")
    assert not breaker.allow("abuser", T0 + 10)
    assert breaker.allow("neighbour", T0 + 10)
    assert breaker.state("neighbour", T0 + 10) is BreakerState.CLOSED


def test_open_breaker_half_opens_after_open_ms_and_a_success_closes_it() -> None:
    breaker = CircuitBreaker(failure_threshold=5, window_ms=60_000, open_ms=120_000)
    tripped(breaker)
    opened_at = T0 + 4
    assert breaker.state("pid:42", opened_at + 119_999) is BreakerState.OPEN
    assert breaker.state("pid:42", opened_at + 120_000) is BreakerState.HALF_OPEN
    assert breaker.allow("pid:42", opened_at + 120_000)
    assert breaker.record_success("pid:42", opened_at + 120_001) is BreakerState.CLOSED
    # The failures that tripped it are forgotten: one more does not reopen it.
    assert breaker.record_failure("pid:42", opened_at + 120_002, "x") is BreakerState.CLOSED


def test_a_failure_while_half_open_reopens_at_once() -> None:
    breaker = CircuitBreaker(failure_threshold=5, open_ms=1_000)
    tripped(breaker)
    assert breaker.record_failure("pid:42", T0 + 2_000, "bad token again") is BreakerState.OPEN
    assert not breaker.allow("pid:42", T0 + 2_500)
    assert breaker.allow("pid:42", T0 + 3_000)


def test_failures_while_open_do_not_extend_the_penalty() -> None:
    breaker = CircuitBreaker(failure_threshold=2, open_ms=1_000)
    tripped(breaker)
    breaker.record_failure("pid:42", T0 + 900, "x")
    assert breaker.allow("pid:42", T0 + 1_001)


def test_success_while_closed_does_not_reset_the_count() -> None:
    breaker = CircuitBreaker(failure_threshold=3)
    breaker.record_failure("c", T0, "x")
    breaker.record_failure("c", T0 + 1, "x")
    assert breaker.record_success("c", T0 + 2) is BreakerState.CLOSED
    assert breaker.record_failure("c", T0 + 3, "x") is BreakerState.OPEN


def test_forget_idle_drops_quiet_clients_but_keeps_open_ones() -> None:
    breaker = CircuitBreaker(failure_threshold=2, window_ms=1_000, open_ms=100_000)
    breaker.record_failure("quiet", T0, "x")
    tripped(breaker, "abuser")
    assert breaker.forget_idle(T0 + 5_000) == 1
    assert not breaker.allow("abuser", T0 + 5_000)


def test_breaker_refuses_a_zero_threshold() -> None:
    with pytest.raises(ValueError, match="failure_threshold"):
        CircuitBreaker(failure_threshold=0)
