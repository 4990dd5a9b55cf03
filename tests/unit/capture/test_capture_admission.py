"""Admission: merge keys, priority-queue order, global and per-app rate limits, input backoff."""

from __future__ import annotations

import pytest
from kronii.capture.core.admission import (
    RATE_WINDOW_MS,
    Admission,
    RateLimiter,
    RateLimits,
    input_backoff_ms,
    merge_key,
    queue_score,
)
from kronii.capture.core.request import Bypass, CaptureSpec, Priority, validate_request

T0 = 1_700_000_000_000


def spec(**overrides: object) -> CaptureSpec:
    fields: dict[str, object] = {
        "process_id": 100,
        "app_name": "firefox",
        "app_start_time_ms": T0,
        "window_id": 11,
        "bypass": Bypass.STRICT,
        "burst_count": 0,
        "burst_interval_ms": 0,
        "priority": None,
        "ttl_ms": 0,
        "requester": "agent-1",
    }
    fields.update(overrides)
    return validate_request(**fields)  # type: ignore[arg-type]


def test_same_requester_and_target_share_a_merge_key() -> None:
    assert merge_key(spec()) == merge_key(spec(priority="high", burst_count=2, ttl_ms=5_000))


@pytest.mark.parametrize(
    "change",
    [{"requester": "agent-2"}, {"process_id": 101}, {"window_id": 12}, {"app_start_time_ms": T0 + 9}],
)
def test_other_requester_or_target_gets_another_merge_key(change: dict[str, object]) -> None:
    assert merge_key(spec()) != merge_key(spec(**change))


def test_focus_next_merges_by_requester_alone() -> None:
    first = spec(bypass="focus_next", process_id=0, window_id=0)
    second = spec(bypass="focus_next", process_id=55, window_id=66)
    assert merge_key(first) == merge_key(second)
    assert merge_key(first) != merge_key(spec(bypass="focus_next", requester="agent-2"))
    assert merge_key(first) != merge_key(spec())


def test_queue_orders_high_before_normal_before_low_then_fifo() -> None:
    jobs = [
        ("low-early", queue_score(Priority.LOW, T0)),
        ("normal-late", queue_score(Priority.NORMAL, T0 + 5_000)),
        ("high-late", queue_score(Priority.HIGH, T0 + 9_000)),
        ("normal-early", queue_score(Priority.NORMAL, T0 + 1)),
        ("high-early", queue_score(Priority.HIGH, T0 + 2)),
    ]
    popped = [name for name, _ in sorted(jobs, key=lambda job: job[1])]
    assert popped == ["high-early", "high-late", "normal-early", "normal-late", "low-early"]


def test_queue_scores_are_exact_at_millisecond_resolution() -> None:
    assert queue_score(Priority.LOW, T0 + 1) - queue_score(Priority.LOW, T0) == 1.0


def test_queue_score_refuses_a_negative_time() -> None:
    with pytest.raises(ValueError, match="enqueued_ms"):
        queue_score(Priority.NORMAL, -1)


def test_per_app_limit_refuses_the_eleventh_capture_of_one_app_in_a_minute() -> None:
    limiter = RateLimiter(RateLimits(global_per_minute=30, per_app_per_minute=10))
    for i in range(10):
        assert limiter.check(T0 + i, "Firefox").allowed
        limiter.record(T0 + i, "Firefox")
    refused = limiter.check(T0 + 100, "firefox")
    assert not refused.allowed
    assert "this app" in refused.reason
    assert refused.retry_after_ms == RATE_WINDOW_MS - 100
    assert limiter.check(T0 + 100, "xterm").allowed


def test_per_app_limit_frees_a_slot_when_the_oldest_capture_slides_out() -> None:
    limiter = RateLimiter(RateLimits(per_app_per_minute=2))
    limiter.record(T0, "xterm")
    limiter.record(T0 + 10_000, "xterm")
    assert not limiter.check(T0 + RATE_WINDOW_MS - 1, "xterm").allowed
    assert limiter.check(T0 + RATE_WINDOW_MS, "xterm").allowed


def test_global_limit_applies_across_apps() -> None:
    limiter = RateLimiter(RateLimits(global_per_minute=3, per_app_per_minute=10))
    for i, app in enumerate(["a", "b", "c"]):
        limiter.record(T0 + i, app)
    refused = limiter.check(T0 + 10, "d")
    assert refused == Admission(
        allowed=False,
        retry_after_ms=RATE_WINDOW_MS - 10,
        reason="global rate limit of 3 captures per minute reached",
    )


def test_captures_without_an_app_count_only_globally() -> None:
    limiter = RateLimiter(RateLimits(global_per_minute=5, per_app_per_minute=1))
    limiter.record(T0, "")
    limiter.record(T0 + 1, "")
    assert limiter.check(T0 + 2, "").allowed
    assert limiter.app_hits == {}


def test_check_does_not_count_and_old_apps_are_forgotten() -> None:
    limiter = RateLimiter(RateLimits(per_app_per_minute=1))
    for _ in range(5):
        assert limiter.check(T0, "xterm").allowed
    limiter.record(T0, "xterm")
    limiter.check(T0 + RATE_WINDOW_MS + 1, "other")
    assert limiter.app_hits == {}
    assert limiter.global_hits == []


def test_rate_limits_refuse_nonsense() -> None:
    with pytest.raises(ValueError, match="per_app_per_minute"):
        RateLimits(per_app_per_minute=0)


@pytest.mark.parametrize(
    ("last_input", "now", "expected"),
    [(None, T0, 0), (T0, T0, 1_500), (T0, T0 + 1_000, 500), (T0, T0 + 1_500, 0), (T0, T0 + 60_000, 0)],
)
def test_input_backoff_waits_out_the_quiet_period(last_input: int | None, now: int, expected: int) -> None:
    assert input_backoff_ms(last_input, now, RateLimits(input_backoff_ms=1_500)) == expected
