"""The job state machine: one test per TRANSITIONS row, terminal states, advance/expired."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from kronii.capture.core.request import Bypass, CaptureSpec, validate_request
from kronii.capture.core.status import (
    STATUS_NUMBER,
    TERMINAL,
    TRANSITIONS,
    HistoryEntry,
    InvalidTransition,
    JobEvent,
    JobRecord,
    JobStatus,
    Transition,
    advance,
    expired,
    new_job,
    next_status,
)

T0 = 1_700_000_000_000
SPEC: CaptureSpec = validate_request(
    process_id=42,
    app_name="xterm",
    app_start_time_ms=T0 - 60_000,
    window_id=7,
    bypass=Bypass.STRICT,
    burst_count=0,
    burst_interval_ms=0,
    priority=None,
    ttl_ms=10_000,
    requester="",
)


def job_in(status: JobStatus) -> JobRecord:
    return replace(new_job("job-1", SPEC, T0), status=status)


@pytest.mark.parametrize("row", TRANSITIONS, ids=lambda row: f"{row.source}-{row.event}")
def test_transition_row_moves_the_job_to_its_target(row: Transition) -> None:
    assert next_status(row.source, row.event) is row.target
    moved = advance(job_in(row.source), row.event, T0 + 5, reason=row.note)
    assert moved.status is row.target
    assert moved.history[-1] == HistoryEntry(row.target, T0 + 5, row.note)


@pytest.mark.parametrize("status", sorted(TERMINAL))
@pytest.mark.parametrize("event", list(JobEvent))
def test_terminal_states_accept_no_event(status: JobStatus, event: JobEvent) -> None:
    with pytest.raises(InvalidTransition) as caught:
        next_status(status, event)
    assert "finished" in str(caught.value)
    with pytest.raises(InvalidTransition):
        advance(job_in(status), event, T0)


def test_events_without_a_row_are_invalid_in_running_states() -> None:
    rows = {(row.source, row.event) for row in TRANSITIONS}
    missing = [
        (status, event)
        for status in JobStatus
        if status not in TERMINAL
        for event in JobEvent
        if (status, event) not in rows
    ]
    assert (JobStatus.QUEUED, JobEvent.SCORED) in missing
    for status, event in missing:
        with pytest.raises(InvalidTransition):
            next_status(status, event)


def test_every_running_state_can_be_cancelled_or_fail() -> None:
    for status in JobStatus:
        if status in TERMINAL:
            continue
        assert next_status(status, JobEvent.CANCELLED) is JobStatus.CANCELLED
        assert next_status(status, JobEvent.ERROR) is JobStatus.FAILED


def test_happy_path_reaches_persisted_with_a_full_history() -> None:
    job = new_job("job-1", SPEC, T0)
    steps = [
        JobEvent.PICKED,
        JobEvent.MATCHED,
        JobEvent.FRAMES_CAPTURED,
        JobEvent.SCORED,
        JobEvent.REDACTED_OK,
    ]
    for offset, event in enumerate(steps, start=1):
        job = advance(job, event, T0 + offset * 100)
    assert job.status is JobStatus.PERSISTED
    assert [entry.status for entry in job.history] == [
        JobStatus.QUEUED,
        JobStatus.WAITING,
        JobStatus.CAPTURING,
        JobStatus.SCORING,
        JobStatus.REDACTING,
        JobStatus.PERSISTED,
    ]
    assert job.started_ms == T0 + 200
    assert job.finished_ms == T0 + 500
    assert job.terminal


def test_rejection_keeps_the_reason_on_the_job() -> None:
    job = job_in(JobStatus.REDACTING)
    rejected = advance(job, JobEvent.REDACTION_REFUSED, T0 + 9, reason="redaction level red")
    assert rejected.status is JobStatus.REJECTED
    assert rejected.reason == "redaction level red"
    assert rejected.finished_ms == T0 + 9


def test_advance_returns_a_new_record_and_leaves_the_old_one() -> None:
    job = new_job("job-1", SPEC, T0)
    moved = advance(job, JobEvent.PICKED, T0 + 1)
    assert job.status is JobStatus.QUEUED
    assert len(job.history) == 1
    assert moved is not job


def test_new_job_deadline_is_creation_plus_ttl() -> None:
    job = new_job("job-1", SPEC, T0, merge_key="kronii|42|0|7")
    assert job.deadline_ms == T0 + 10_000
    assert job.history == (HistoryEntry(JobStatus.QUEUED, T0, ""),)
    assert job.merge_key == "kronii|42|0|7"


def test_waiting_job_expires_at_its_deadline_not_before() -> None:
    job = advance(new_job("job-1", SPEC, T0), JobEvent.PICKED, T0 + 1)
    assert not expired(job, job.deadline_ms - 1)
    assert expired(job, job.deadline_ms)
    ended = advance(job, JobEvent.TTL_ELAPSED, job.deadline_ms, reason="the window never matched")
    assert ended.status is JobStatus.EXPIRED
    assert ended.reason == "the window never matched"


def test_queued_job_past_its_deadline_is_expired() -> None:
    assert expired(new_job("job-1", SPEC, T0), T0 + 10_000)


@pytest.mark.parametrize("status", [JobStatus.CAPTURING, JobStatus.SCORING, JobStatus.REDACTING, *TERMINAL])
def test_ttl_does_not_cut_a_capture_in_progress_or_a_finished_job(status: JobStatus) -> None:
    job = job_in(status)
    assert not expired(job, job.deadline_ms + 60_000)
    with pytest.raises(InvalidTransition):
        next_status(status, JobEvent.TTL_ELAPSED)


def test_caller_cancellation_ends_a_waiting_job() -> None:
    job = advance(new_job("job-1", SPEC, T0), JobEvent.PICKED, T0 + 1)
    cancelled = advance(job, JobEvent.CANCELLED, T0 + 2, reason="cancelled by the caller")
    assert cancelled.status is JobStatus.CANCELLED
    assert cancelled.terminal
    with pytest.raises(InvalidTransition):
        advance(cancelled, JobEvent.MATCHED, T0 + 3)


def test_job_record_round_trips_through_its_dict() -> None:
    job = advance(new_job("job-1", SPEC, T0, merge_key="k"), JobEvent.PICKED, T0 + 1)
    job = replace(job, raw_ids=("a", "b"), captured_pid=42, primary_score=0.5, redaction_level="amber")
    assert JobRecord.from_dict(job.to_dict()) == job


def test_status_numbers_follow_capture_proto() -> None:
    proto = Path(__file__).resolve().parents[3] / "proto" / "kronii" / "capture" / "v1" / "capture.proto"
    body = re.search(r"enum CaptureStatusCode \{(.*?)\}", proto.read_text(), re.DOTALL)
    assert body is not None
    numbers = {label.lower(): int(n) for label, n in re.findall(r"(\w+) = (\d+);", body.group(1)) if int(n)}
    assert {status.value: number for status, number in STATUS_NUMBER.items()} == numbers
