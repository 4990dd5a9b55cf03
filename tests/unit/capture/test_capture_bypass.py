"""BypassPolicy matching (seed 000): strict, window_relaxed, app_relaxed, focus_next, lock, no window."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kronii.capture.core.bypass import MatchParams, Readiness, WindowFacts, readiness, wait_reason
from kronii.capture.core.request import Bypass, CaptureSpec, validate_request

START = 1_700_000_000_000
PARAMS = MatchParams()
TARGET = WindowFacts(
    pid=100,
    app_name="Firefox",
    app_start_time_ms=START,
    window_id=11,
    wm_class="firefox",
    title="docs",
    focus_seq=5,
    geometry=(0, 0, 800, 600),
)
OTHER_APP = WindowFacts(
    pid=200,
    app_name="xterm",
    app_start_time_ms=START - 5_000,
    window_id=21,
    wm_class="XTerm",
    title="sh",
    focus_seq=6,
)


def spec(bypass: Bypass, **overrides: object) -> CaptureSpec:
    fields: dict[str, object] = {
        "process_id": 100,
        "app_name": "firefox",
        "app_start_time_ms": START,
        "window_id": 11,
        "bypass": bypass,
        "burst_count": 0,
        "burst_interval_ms": 0,
        "priority": None,
        "ttl_ms": 0,
        "requester": "",
    }
    fields.update(overrides)
    return validate_request(**fields)  # type: ignore[arg-type]


def ready(
    request: CaptureSpec, current: WindowFacts | None, *, seq: int = 5, locked: bool = False
) -> Readiness:
    return readiness(request, current, enqueued_focus_seq=seq, locked=locked, params=PARAMS)


@pytest.mark.parametrize("bypass", list(Bypass))
def test_no_focused_window_waits(bypass: Bypass) -> None:
    assert ready(spec(bypass), None, seq=0) is Readiness.WAIT


@pytest.mark.parametrize("bypass", list(Bypass))
def test_locked_screen_never_matches(bypass: Bypass) -> None:
    assert ready(spec(bypass), replace(TARGET, focus_seq=99), seq=0, locked=True) is Readiness.WAIT


def test_strict_matches_the_exact_window() -> None:
    assert ready(spec(Bypass.STRICT), TARGET) is Readiness.READY


def test_strict_tolerates_coarse_proc_start_times() -> None:
    assert ready(spec(Bypass.STRICT), replace(TARGET, app_start_time_ms=START + 1_000)) is Readiness.READY
    assert ready(spec(Bypass.STRICT), replace(TARGET, app_start_time_ms=START - 1_001)) is Readiness.WAIT


@pytest.mark.parametrize(
    "change",
    [{"window_id": 12}, {"pid": 101}, {"app_start_time_ms": START + 60_000}],
    ids=["other-window", "other-pid", "pid-reused-by-a-later-process"],
)
def test_strict_waits_on_any_mismatch(change: dict[str, int]) -> None:
    assert ready(spec(Bypass.STRICT), replace(TARGET, **change)) is Readiness.WAIT  # type: ignore[arg-type]


def test_strict_without_a_start_time_matches_on_pid_and_window() -> None:
    assert ready(spec(Bypass.STRICT, app_start_time_ms=0), TARGET) is Readiness.READY


def test_window_relaxed_accepts_another_window_of_the_same_process() -> None:
    assert ready(spec(Bypass.WINDOW_RELAXED), replace(TARGET, window_id=12)) is Readiness.READY


def test_window_relaxed_refuses_another_process() -> None:
    assert ready(spec(Bypass.WINDOW_RELAXED), replace(TARGET, pid=101, window_id=12)) is Readiness.WAIT
    assert (
        ready(spec(Bypass.WINDOW_RELAXED), replace(TARGET, app_start_time_ms=START + 5_000)) is Readiness.WAIT
    )


def test_app_relaxed_matches_the_same_process() -> None:
    assert ready(spec(Bypass.APP_RELAXED), replace(TARGET, window_id=13)) is Readiness.READY


def test_app_relaxed_accepts_a_restarted_app_with_a_new_pid() -> None:
    restarted = replace(TARGET, pid=300, app_name="FIREFOX", app_start_time_ms=START + 120_000, window_id=31)
    assert ready(spec(Bypass.APP_RELAXED), restarted) is Readiness.READY


def test_app_relaxed_refuses_a_restart_beyond_the_tolerance() -> None:
    late = replace(TARGET, pid=300, app_start_time_ms=START + PARAMS.app_restart_tolerance_ms + 1)
    assert ready(spec(Bypass.APP_RELAXED), late) is Readiness.WAIT
    tolerant = MatchParams(app_restart_tolerance_ms=600_000)
    request = spec(Bypass.APP_RELAXED)
    assert readiness(request, late, enqueued_focus_seq=5, locked=False, params=tolerant) is Readiness.READY


def test_app_relaxed_refuses_an_instance_started_before_the_requested_one() -> None:
    older = replace(TARGET, pid=300, app_start_time_ms=START - 10_000)
    assert ready(spec(Bypass.APP_RELAXED), older) is Readiness.WAIT


def test_app_relaxed_refuses_another_app() -> None:
    assert (
        ready(spec(Bypass.APP_RELAXED), replace(OTHER_APP, app_start_time_ms=START + 1_000)) is Readiness.WAIT
    )


def test_strict_and_window_relaxed_refuse_a_restarted_app() -> None:
    restarted = replace(TARGET, pid=300, app_start_time_ms=START + 120_000)
    assert ready(spec(Bypass.STRICT), restarted) is Readiness.WAIT
    assert ready(spec(Bypass.WINDOW_RELAXED), restarted) is Readiness.WAIT


def test_focus_next_waits_until_focus_switches_after_the_request() -> None:
    request = spec(Bypass.FOCUS_NEXT, process_id=0, window_id=0, app_name="", app_start_time_ms=0)
    assert ready(request, TARGET, seq=5) is Readiness.WAIT
    assert ready(request, OTHER_APP, seq=5) is Readiness.READY


def test_focus_next_takes_whatever_window_comes_next() -> None:
    request = spec(Bypass.FOCUS_NEXT)
    assert ready(request, replace(TARGET, focus_seq=6), seq=5) is Readiness.READY


def test_match_params_refuse_negative_tolerances() -> None:
    with pytest.raises(ValueError, match="app_restart_tolerance_ms"):
        MatchParams(app_restart_tolerance_ms=-1)


def test_wait_reason_explains_each_wait_and_is_empty_when_ready() -> None:
    def reason(request: CaptureSpec, current: WindowFacts | None, *, locked: bool = False) -> str:
        return wait_reason(request, current, enqueued_focus_seq=5, locked=locked, params=PARAMS)

    assert reason(spec(Bypass.STRICT), TARGET) == ""
    assert reason(spec(Bypass.STRICT), TARGET, locked=True) == "the screen is locked"
    assert reason(spec(Bypass.STRICT), None) == "no window has focus"
    assert "another window" in reason(spec(Bypass.STRICT), replace(TARGET, window_id=12))
    assert "not the requested one" in reason(spec(Bypass.WINDOW_RELAXED), OTHER_APP)
    assert reason(spec(Bypass.FOCUS_NEXT), TARGET) == "no focus switch since the request"
    assert "docs" not in reason(spec(Bypass.STRICT), OTHER_APP)
