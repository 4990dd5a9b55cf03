"""Does the focused window satisfy a request's BypassPolicy? (seed 000, "BypassPolicy").

`readiness` is asked every time the sensor reports a focus change (and once when a job is
picked, against the sensor's snapshot); it answers ready or wait, never "no": a job that never
matches ends by its TTL.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from kronii.capture.core.request import Bypass, CaptureSpec


class Readiness(enum.StrEnum):
    READY = "ready"
    WAIT = "wait"


@dataclass(frozen=True, slots=True)
class WindowFacts:
    """The focused window as the sensor reports it. `focus_seq` increases with every focus switch
    the matcher observes, so "a switch happened after the request" is a comparison of numbers."""

    pid: int
    app_name: str
    app_start_time_ms: int
    window_id: int
    wm_class: str
    title: str
    focus_seq: int
    geometry: tuple[int, int, int, int] | None = None


@dataclass(frozen=True, slots=True)
class MatchParams:
    # /proc start times are in clock ticks since boot converted to epoch: two readings of the same
    # process may disagree by a few hundred milliseconds.
    start_time_tolerance_ms: int = 1_000
    # app_relaxed accepts a new pid of the same app started at most this long after the requested
    # start time (a graceful restart), never one started before it.
    app_restart_tolerance_ms: int = 300_000

    def __post_init__(self) -> None:
        if self.start_time_tolerance_ms < 0:
            raise ValueError("start_time_tolerance_ms must not be negative.")
        if self.app_restart_tolerance_ms < 0:
            raise ValueError("app_restart_tolerance_ms must not be negative.")


def readiness(
    spec: CaptureSpec,
    current: WindowFacts | None,
    *,
    enqueued_focus_seq: int,
    locked: bool,
    params: MatchParams,
) -> Readiness:
    """READY when the focused window is one the request's policy accepts, else WAIT.

    A locked screen and an unknown focus always wait. `enqueued_focus_seq` is the sensor's
    focus_seq when the job was queued; only focus_next uses it.
    """
    if locked or current is None:
        return Readiness.WAIT
    return Readiness.READY if _matches(spec, current, enqueued_focus_seq, params) else Readiness.WAIT


def _matches(spec: CaptureSpec, current: WindowFacts, enqueued_focus_seq: int, params: MatchParams) -> bool:
    match spec.bypass:
        case Bypass.STRICT:
            return _same_process(spec, current, params) and current.window_id == spec.window_id
        case Bypass.WINDOW_RELAXED:
            return _same_process(spec, current, params)
        case Bypass.APP_RELAXED:
            return _same_process(spec, current, params) or _restarted_app(spec, current, params)
        case Bypass.FOCUS_NEXT:
            return current.focus_seq > enqueued_focus_seq
    raise AssertionError(f"unhandled bypass {spec.bypass!r}")  # pragma: no cover


def _same_process(spec: CaptureSpec, current: WindowFacts, params: MatchParams) -> bool:
    if spec.process_id == 0 or current.pid != spec.process_id:
        return False
    # A start time of 0 is "unknown" (the caller did not say): the pid alone then decides.
    if spec.app_start_time_ms == 0:
        return True
    return abs(current.app_start_time_ms - spec.app_start_time_ms) <= params.start_time_tolerance_ms


def _restarted_app(spec: CaptureSpec, current: WindowFacts, params: MatchParams) -> bool:
    # A process of the same app (by name) that started after the requested one: the app was
    # restarted. One started before it is another instance that was already running.
    if not spec.app_name or spec.app_name.casefold() != current.app_name.casefold():
        return False
    # Without the requested start time a "later start" cannot be judged.
    if spec.app_start_time_ms == 0:
        return False
    delay = current.app_start_time_ms - spec.app_start_time_ms
    return 0 < delay <= params.app_restart_tolerance_ms


def wait_reason(
    spec: CaptureSpec,
    current: WindowFacts | None,
    *,
    enqueued_focus_seq: int,
    locked: bool,
    params: MatchParams,
) -> str:
    """Why `readiness` says WAIT, as a short phrase for a job's status reason ("" when ready).
    It names no window title: titles can hold what redaction exists to hide."""
    if locked:
        return "the screen is locked"
    if current is None:
        return "no window has focus"
    if _matches(spec, current, enqueued_focus_seq, params):
        return ""
    if spec.bypass is Bypass.FOCUS_NEXT:
        return "no focus switch since the request"
    if spec.bypass is Bypass.STRICT and _same_process(spec, current, params):
        return f"another window of the requested process has focus (bypass {spec.bypass.value})"
    return f"the focused window is not the requested one (bypass {spec.bypass.value})"
