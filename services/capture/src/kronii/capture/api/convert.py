"""Between the core and the wire, both ways: capture.proto's messages out (api_edge.as_json gives
their JSON), and in: a CaptureRequest as the use case's command, the sensor's Focus and Snapshot as
the matcher's window facts.

Nothing here ever carries a filesystem path: records hold ids, names and numbers only.
"""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp
from kronii.activity.v1 import activity_pb2 as apb
from kronii.capture.core.bypass import WindowFacts
from kronii.capture.core.commands import CaptureRequest
from kronii.capture.core.desktop import SensorSnapshot
from kronii.capture.core.screenshots import ObjectMeta
from kronii.capture.core.status import STATUS_NUMBER, HistoryEntry, JobRecord, JobStatus
from kronii.capture.v1 import capture_pb2 as pb

__all__ = [
    "capture_request",
    "meta_message",
    "result_message",
    "sensor_snapshot",
    "status_message",
    "timestamp_ms",
    "window_facts",
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


# ---- inbound ---------------------------------------------------------------------------------------


def capture_request(message: pb.CaptureRequest) -> CaptureRequest:
    """The gRPC request as the use case's command (enums by their proto numbers)."""
    return CaptureRequest(
        process_id=message.process_id,
        app_name=message.app_name,
        app_start_time_ms=message.app_start_time,
        window_id=message.window_id,
        bypass=int(message.bypass),
        burst_count=message.burst_count,
        burst_interval_ms=message.burst_interval_ms,
        priority=int(message.priority),
        ttl_ms=message.ttl_ms,
        requester=message.requester,
    )


def window_facts(focus: apb.Focus) -> WindowFacts | None:
    """The sensor's Focus as the core's WindowFacts (its focus_seq is the matcher's to give); None
    when no window has the focus."""
    if not focus.window_id:
        return None
    return WindowFacts(
        pid=int(focus.pid),
        app_name=focus.app_name,
        app_start_time_ms=int(focus.app_start_time),
        window_id=int(focus.window_id),
        wm_class=focus.wm_class,
        title=focus.title,
        focus_seq=0,
    )


def sensor_snapshot(raw: bytes) -> SensorSnapshot:
    """The sensor's stored Snapshot (its protobuf bytes); the last input is its update time less
    its idle time, when it says when it was updated."""
    snapshot = apb.Snapshot()
    snapshot.ParseFromString(raw)
    updated_ms = snapshot.updated_at.ToMilliseconds() if snapshot.HasField("updated_at") else 0
    return SensorSnapshot(
        focus=window_facts(snapshot.focus),
        locked=snapshot.locked,
        display_available=snapshot.display_available,
        input_at_ms=updated_ms - int(snapshot.idle_ms) if updated_ms else None,
        updated_at_ms=updated_ms or None,
    )
