"""The capture job's life as a transition table, and the job record it moves.

queued -> waiting -> capturing -> scoring -> redacting -> persisted, or expired / rejected /
failed / cancelled. `TRANSITIONS` is the only place these moves are written down; `next_status`
and `advance` interpret it. Terminal states accept no event at all.

The TTL bounds the wait for the target window: `ttl_elapsed` applies to queued and waiting only.
Once the window matched, the burst, scoring and redaction take about a second and finish; the
caller can still cancel them.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, NamedTuple

from kronii.capture.core.request import CaptureSpec


class JobStatus(enum.StrEnum):
    QUEUED = "queued"
    WAITING = "waiting"
    CAPTURING = "capturing"
    SCORING = "scoring"
    REDACTING = "redacting"
    PERSISTED = "persisted"
    EXPIRED = "expired"
    REJECTED = "rejected"
    FAILED = "failed"
    CANCELLED = "cancelled"


class JobEvent(enum.StrEnum):
    # The scheduler took the job off the priority queue; the matcher now watches for its window.
    PICKED = "picked"
    # The matcher found the target window ready (core.bypass.readiness).
    MATCHED = "matched"
    FRAMES_CAPTURED = "frames_captured"
    SCORED = "scored"
    REDACTED_OK = "redacted_ok"
    # Redaction judged the frame red, or masking would hide too much of it.
    REDACTION_REFUSED = "redaction_refused"
    TTL_ELAPSED = "ttl_elapsed"
    CANCELLED = "cancelled"
    ERROR = "error"


TERMINAL: frozenset[JobStatus] = frozenset(
    {JobStatus.PERSISTED, JobStatus.EXPIRED, JobStatus.REJECTED, JobStatus.FAILED, JobStatus.CANCELLED}
)
ACTIVE: frozenset[JobStatus] = frozenset(JobStatus) - TERMINAL
# States in which the TTL still applies (see the module docstring).
TTL_BOUND: frozenset[JobStatus] = frozenset({JobStatus.QUEUED, JobStatus.WAITING})

# The proto's CaptureStatusCode numbers, so the API layer can map without a table of its own.
STATUS_NUMBER: Mapping[JobStatus, int] = MappingProxyType(
    {status: number for number, status in enumerate(JobStatus, start=1)}
)


@dataclass(frozen=True, slots=True)
class Transition:
    source: JobStatus
    event: JobEvent
    target: JobStatus
    note: str


_S = JobStatus
_E = JobEvent

_PROGRESS: tuple[Transition, ...] = (
    Transition(_S.QUEUED, _E.PICKED, _S.WAITING, "taken off the priority queue; waiting for the window"),
    Transition(_S.WAITING, _E.MATCHED, _S.CAPTURING, "the target window is focused and the screen unlocked"),
    Transition(_S.CAPTURING, _E.FRAMES_CAPTURED, _S.SCORING, "the burst is in memory"),
    Transition(_S.SCORING, _E.SCORED, _S.REDACTING, "the primary frame is chosen"),
    Transition(_S.REDACTING, _E.REDACTED_OK, _S.PERSISTED, "the redacted primary is sealed and stored"),
    Transition(_S.REDACTING, _E.REDACTION_REFUSED, _S.REJECTED, "red content or too much of it masked"),
    Transition(_S.QUEUED, _E.TTL_ELAPSED, _S.EXPIRED, "never picked before the deadline"),
    Transition(_S.WAITING, _E.TTL_ELAPSED, _S.EXPIRED, "the window never matched before the deadline"),
)
# Any running job can be cancelled by its caller, or fail on an error.
_ANY_ACTIVE: tuple[Transition, ...] = tuple(
    Transition(status, event, target, note)
    for event, target, note in (
        (_E.CANCELLED, _S.CANCELLED, "cancelled by the caller"),
        (_E.ERROR, _S.FAILED, "an error stopped the job"),
    )
    for status in JobStatus
    if status not in TERMINAL
)

TRANSITIONS: tuple[Transition, ...] = _PROGRESS + _ANY_ACTIVE

_TABLE: Mapping[tuple[JobStatus, JobEvent], Transition] = MappingProxyType(
    {(row.source, row.event): row for row in TRANSITIONS}
)
assert len(_TABLE) == len(TRANSITIONS), "TRANSITIONS has two rows for one (source, event)"
assert not any(row.source in TERMINAL for row in TRANSITIONS), "a terminal state has a way out"


class InvalidTransition(ValueError):
    def __init__(self, current: JobStatus, event: JobEvent) -> None:
        if current in TERMINAL:
            message = f"a {current.value} job is finished and accepts no event ({event.value})."
        else:
            message = f"a {current.value} job does not accept the event {event.value}."
        super().__init__(message)
        self.current = current
        self.event = event


def next_status(current: JobStatus, event: JobEvent) -> JobStatus:
    row = _TABLE.get((current, event))
    if row is None:
        raise InvalidTransition(current, event)
    return row.target


class HistoryEntry(NamedTuple):
    status: JobStatus
    at_ms: int
    reason: str


@dataclass(frozen=True, slots=True)
class JobRecord:
    """One capture job. Immutable: `advance` returns the next version.

    The `captured_*` fields describe the window actually captured (with focus_next or
    app_relaxed it can differ from the spec); they and the frame results are set by the worker
    with `dataclasses.replace` before or with the event that reports them.
    """

    job_id: str
    spec: CaptureSpec
    status: JobStatus
    created_ms: int
    deadline_ms: int
    history: tuple[HistoryEntry, ...]
    reason: str = ""
    primary_screenshot_id: str = ""
    raw_ids: tuple[str, ...] = ()
    started_ms: int | None = None
    finished_ms: int | None = None
    captured_pid: int = 0
    captured_app_name: str = ""
    captured_window_id: int = 0
    frames_captured: int = 0
    primary_score: float = 0.0
    redaction_level: str = ""
    masked_fraction: float = 0.0
    merge_key: str = ""

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (for the Redis job hash and the jobs table). Contains no filesystem path."""
        return {
            "job_id": self.job_id,
            "spec": self.spec.to_dict(),
            "status": self.status.value,
            "created_ms": self.created_ms,
            "deadline_ms": self.deadline_ms,
            "history": [[entry.status.value, entry.at_ms, entry.reason] for entry in self.history],
            "reason": self.reason,
            "primary_screenshot_id": self.primary_screenshot_id,
            "raw_ids": list(self.raw_ids),
            "started_ms": self.started_ms,
            "finished_ms": self.finished_ms,
            "captured_pid": self.captured_pid,
            "captured_app_name": self.captured_app_name,
            "captured_window_id": self.captured_window_id,
            "frames_captured": self.frames_captured,
            "primary_score": self.primary_score,
            "redaction_level": self.redaction_level,
            "masked_fraction": self.masked_fraction,
            "merge_key": self.merge_key,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JobRecord:
        return cls(
            job_id=str(data["job_id"]),
            spec=CaptureSpec.from_dict(data["spec"]),
            status=JobStatus(data["status"]),
            created_ms=int(data["created_ms"]),
            deadline_ms=int(data["deadline_ms"]),
            history=tuple(
                HistoryEntry(JobStatus(status), int(at_ms), str(reason))
                for status, at_ms, reason in data["history"]
            ),
            reason=str(data.get("reason", "")),
            primary_screenshot_id=str(data.get("primary_screenshot_id", "")),
            raw_ids=tuple(str(raw_id) for raw_id in data.get("raw_ids", ())),
            started_ms=_optional_int(data.get("started_ms")),
            finished_ms=_optional_int(data.get("finished_ms")),
            captured_pid=int(data.get("captured_pid", 0)),
            captured_app_name=str(data.get("captured_app_name", "")),
            captured_window_id=int(data.get("captured_window_id", 0)),
            frames_captured=int(data.get("frames_captured", 0)),
            primary_score=float(data.get("primary_score", 0.0)),
            redaction_level=str(data.get("redaction_level", "")),
            masked_fraction=float(data.get("masked_fraction", 0.0)),
            merge_key=str(data.get("merge_key", "")),
        )


def _optional_int(value: object) -> int | None:
    return None if value is None else int(str(value))


def new_job(job_id: str, spec: CaptureSpec, now_ms: int, *, merge_key: str = "") -> JobRecord:
    """A freshly queued job whose deadline is `now_ms + spec.ttl_ms`."""
    return JobRecord(
        job_id=job_id,
        spec=spec,
        status=JobStatus.QUEUED,
        created_ms=now_ms,
        deadline_ms=now_ms + spec.ttl_ms,
        history=(HistoryEntry(JobStatus.QUEUED, now_ms, ""),),
        merge_key=merge_key,
    )


def advance(job: JobRecord, event: JobEvent, now_ms: int, reason: str = "") -> JobRecord:
    """The job after `event`, with the new status appended to its history.

    Entering capturing stamps `started_ms`; entering a terminal state stamps `finished_ms` and
    keeps `reason` as the job's reason. Raises `InvalidTransition` when the table has no row.
    """
    target = next_status(job.status, event)
    started_ms = now_ms if target is JobStatus.CAPTURING and job.started_ms is None else job.started_ms
    finished = target in TERMINAL
    return replace(
        job,
        status=target,
        history=(*job.history, HistoryEntry(target, now_ms, reason)),
        reason=reason if finished else job.reason,
        started_ms=started_ms,
        finished_ms=now_ms if finished else job.finished_ms,
    )


def expired(job: JobRecord, now_ms: int) -> bool:
    """True when the job still waits (queued or waiting) and its deadline has passed."""
    return job.status in TTL_BOUND and now_ms >= job.deadline_ms


@dataclass(frozen=True)
class StoredJob:
    """A job as the service keeps it: the record, plus what the matcher needs that is not the job's."""

    record: JobRecord
    # The matcher's focus_seq when the job was queued (FocusNext waits for a later switch).
    enqueued_focus_seq: int
