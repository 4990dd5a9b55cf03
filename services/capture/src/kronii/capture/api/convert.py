"""Between the core's records and capture.proto's messages (api_edge.as_json gives their JSON).

Nothing here ever carries a filesystem path: records hold ids, names and numbers only.
"""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp
from kronii.capture.core.screenshots import ObjectMeta
from kronii.capture.core.status import STATUS_NUMBER, HistoryEntry, JobRecord, JobStatus
from kronii.capture.v1 import capture_pb2 as pb

__all__ = [
    "meta_message",
    "result_message",
    "status_message",
    "timestamp_ms",
]


def timestamp_ms(ms: int | None) -> Timestamp | None:
    if ms is None:
        return None
    stamp = Timestamp()
    stamp.FromMilliseconds(int(ms))
    return stamp


def status_code(status: JobStatus) -> int:
    return STATUS_NUMBER[status]


def status_message(job: JobRecord, entry: HistoryEntry | None = None) -> pb.CaptureStatus:
    """One status of a job: the latest unless `entry` names an earlier one."""
    entry = entry if entry is not None else job.history[-1]
    message = pb.CaptureStatus(
        job_id=job.job_id,
        status=status_code(entry.status),  # type: ignore[arg-type]
        reason=entry.reason,
        at=timestamp_ms(entry.at_ms),
    )
    if entry.status is JobStatus.PERSISTED:
        message.primary_screenshot_id = job.primary_screenshot_id
    return message


def result_message(job: JobRecord, *, include_raw_ids: bool) -> pb.CaptureResult:
    meta = pb.CaptureMeta(
        pid=job.captured_pid or job.spec.process_id,
        app_name=job.captured_app_name or job.spec.app_name,
        window_id=job.captured_window_id or job.spec.window_id,
        reason=job.reason,
        redaction_level=job.redaction_level,
        frames_captured=job.frames_captured,
        primary_score=job.primary_score,
        masked_fraction=job.masked_fraction,
    )
    started = timestamp_ms(job.started_ms)
    if started is not None:
        meta.started_at.CopyFrom(started)
    finished = timestamp_ms(job.finished_ms)
    if finished is not None:
        meta.finished_at.CopyFrom(finished)
    return pb.CaptureResult(
        job_id=job.job_id,
        status=status_code(job.status),  # type: ignore[arg-type]
        screenshot_ids=list(job.raw_ids) if include_raw_ids else [],
        primary_screenshot_id=job.primary_screenshot_id,
        meta=meta,
        history=[status_message(job, entry) for entry in job.history],
    )


def meta_message(meta: ObjectMeta) -> pb.ScreenshotMeta:
    message = pb.ScreenshotMeta(
        screenshot_id=meta.object_id,
        job_id=meta.job_id,
        kind=meta.kind,
        app_name=meta.app_name,
        width=meta.width,
        height=meta.height,
        redaction_level=meta.redaction_level,
        score=meta.score,
    )
    message.created_at.FromDatetime(meta.created_at)
    if meta.expires_at is not None:
        message.expires_at.FromDatetime(meta.expires_at)
    return message
