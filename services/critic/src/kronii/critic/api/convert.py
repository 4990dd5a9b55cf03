"""Between the critic's values and critic.proto's messages (the HTTP API's JSON is the proto's), and
the checks both edges make on what a caller sent: each refusal is an InvalidArgument naming the field."""

from __future__ import annotations

import re
import time

from google.protobuf.timestamp_pb2 import Timestamp
from kronii.critic.core.commands import ExportQuery, Reported, SearchQuery, Similar, SimilarQuery
from kronii.critic.core.doctor import DoctorReport
from kronii.critic.core.model import InvocationEvent, InvocationRecord, Trigger
from kronii.critic.core.retrieval import Hit
from kronii.critic.v1 import critic_pb2 as pb
from kronii.foundation.errors import InvalidArgument

__all__ = [
    "DEFAULT_K",
    "DEFAULT_TAKE",
    "MAX_K",
    "MAX_MUTE_SECONDS",
    "MAX_TAKE",
    "MAX_TEXT",
    "doctor_message",
    "event_from",
    "export_args_from",
    "hit_message",
    "mute_message",
    "mute_seconds_from",
    "record_message",
    "reported_message",
    "search_message",
    "search_query_from",
    "similar_message",
    "similar_query_from",
    "wall_clock_ms",
]

DEFAULT_TAKE = 20
MAX_TAKE = 500
DEFAULT_K = 5
MAX_K = 100
MAX_MUTE_SECONDS = 31 * 24 * 3600
# A command line or an error text longer than this is not a person's command: `kronii run` keeps
# the last 8 KB of stderr.
MAX_TEXT = 64 * 1024
_SHELL = re.compile(r"[a-z][a-z0-9_-]{0,15}")
# A record's id as the critic makes them (32 hexadecimal characters); letters, digits, - and _ are
# taken so that an id from elsewhere can still be asked for, but a path or a sentence is not an id.
_RECORD_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
# google.protobuf.Timestamp's own range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z.
_TIMESTAMP_SECONDS = (-62_135_596_800, 253_402_300_799)
# A command reported as starting later than this after now is not one a shell ran.
_FUTURE_SLACK_MS = 86_400_000
_TRIGGERS = ", ".join(trigger.value for trigger in Trigger)


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


# ---- out: values to messages ---------------------------------------------------------------------


def _timestamp(ms: int) -> Timestamp:
    stamp = Timestamp()
    stamp.FromMilliseconds(ms)
    return stamp


def record_message(record: InvocationRecord, *, embeddings: bool = False) -> pb.InvocationRecord:
    """The record as the wire carries it; its unit vector only when ``embeddings`` asks for it."""
    return pb.InvocationRecord(
        record_id=record.record_id,
        timestamp=_timestamp(record.timestamp_ms),
        trigger=record.trigger.value,
        command_name=record.command_name,
        command_line=record.command_line,
        cwd=record.cwd,
        exit_status=record.exit_status,
        duration_ms=min(max(record.duration_ms, 0), 2**32 - 1),
        shell=record.shell,
        session=record.session,
        error_type=record.error_type,
        error_message=record.error_message,
        summary=record.summary,
        redactions=max(record.redactions, 0),
        embedding=list(record.embedding) if embeddings else [],
    )


def hit_message(hit: Hit) -> pb.Hit:
    return pb.Hit(
        record=record_message(hit.record), similarity=hit.similarity, score=hit.score, tier=hit.tier
    )


def search_message(hits: list[Hit]) -> pb.SearchResponse:
    return pb.SearchResponse(hits=[hit_message(hit) for hit in hits])


def similar_message(similar: Similar) -> pb.SimilarResponse:
    return pb.SimilarResponse(
        anchor=record_message(similar.anchor), hits=[hit_message(hit) for hit in similar.hits]
    )


def reported_message(reported: Reported) -> pb.ReportEventResponse:
    if reported.record is None:
        return pb.ReportEventResponse(recorded=False, hint=reported.hint)
    return pb.ReportEventResponse(recorded=True, record=record_message(reported.record), hint=reported.hint)


def mute_message(muted_until_ms: int) -> pb.MuteState:
    if muted_until_ms <= 0:
        return pb.MuteState(muted=False)
    return pb.MuteState(muted=True, until=_timestamp(muted_until_ms))


def doctor_message(report: DoctorReport) -> pb.DoctorReport:
    hooks = [
        pb.ShellHooks(shell=seen.shell, events=seen.events, last_seen=_timestamp(seen.last_seen_ms))
        if seen.last_seen_ms
        else pb.ShellHooks(shell=seen.shell, events=seen.events)
        for seen in report.hooks
    ]
    places = {
        name: pb.PathState(path=place.path, ok=place.ok, problem=place.problem, pending=place.pending)
        for name, place in (("spool", report.spool), ("hints", report.hints))
    }
    model = report.model
    records, queue = report.records, report.embeddings
    return pb.DoctorReport(
        hooks=hooks,
        spool=places["spool"],
        hints=places["hints"],
        model=pb.ModelState(
            available=model.available, name=model.name, sha256=model.sha256, problem=model.problem
        ),
        records=pb.RecordCounts(
            ram=records.ram, files=records.files, database=records.database, redactions=records.redactions
        ),
        embeddings=pb.EmbeddingQueue(
            depth=queue.depth,
            capacity=queue.capacity,
            dropped=queue.dropped,
            latency_p50_ms=queue.latency_p50_ms,
            latency_p95_ms=queue.latency_p95_ms,
        ),
        mute=mute_message(report.muted_until_ms),
        problems=list(report.problems),
    )


# ---- in: messages to values, checked -------------------------------------------------------------


def _stamp_ms(stamp: Timestamp, name: str) -> int:
    """A Timestamp field as ms since the epoch; one outside the Timestamp range (which gRPC lets
    through unchecked, unlike the JSON form) or before 1970 is an InvalidArgument naming it."""
    low, high = _TIMESTAMP_SECONDS
    if not (low <= stamp.seconds <= high and 0 <= stamp.nanos <= 999_999_999):
        raise InvalidArgument(
            f"{name} is not a valid time (seconds from 1970 up to year 9999, nanos from 0 to 999999999)",
            field=name,
        )
    ms = stamp.ToMilliseconds()
    if ms < 0:
        raise InvalidArgument(f"{name} must be a time after 1970-01-01", field=name)
    return ms


def _since_ms(message: pb.SearchRequest | pb.ExportRequest) -> int:
    if not message.HasField("since"):
        return 0
    return _stamp_ms(message.since, "since")


def _text(value: str, name: str, *, required: bool = False) -> str:
    if required and not value.strip():
        raise InvalidArgument(f"{name} is required", field=name)
    if len(value) > MAX_TEXT:
        raise InvalidArgument(f"{name} is longer than {MAX_TEXT} characters", field=name)
    if "\x00" in value:
        raise InvalidArgument(f"{name} must not contain a NUL character", field=name)
    return value


def event_from(message: pb.InvocationEvent, now_ms: int) -> InvocationEvent:
    """A reported command, checked; unset ``started`` is ``now_ms`` less the duration."""
    if not _SHELL.fullmatch(message.shell):
        raise InvalidArgument(
            "shell must name the shell in lower case, e.g. bash, zsh, fish or run", field="shell"
        )
    if not 0 <= message.exit_status <= 255:
        raise InvalidArgument("exit_status must be from 0 to 255", field="exit_status")
    if message.HasField("started"):
        started = _stamp_ms(message.started, "started")
        if started <= 0:
            raise InvalidArgument("started must be a time after 1970-01-01", field="started")
        if started > now_ms + _FUTURE_SLACK_MS:
            raise InvalidArgument("started is more than a day ahead of the critic's clock", field="started")
    else:
        started = max(now_ms - message.duration_ms, 0)
    return InvocationEvent(
        shell=message.shell,
        session=_text(message.session, "session"),
        tty=_text(message.tty, "tty"),
        cwd=_text(message.cwd, "cwd"),
        command_line=_text(message.command_line, "command_line", required=True),
        exit_status=message.exit_status,
        started_ms=started,
        duration_ms=message.duration_ms,
        error_text=_text(message.error_text, "error_text"),
    )


def _trigger(value: str) -> Trigger | None:
    if not value:
        return None
    try:
        return Trigger(value)
    except ValueError:
        raise InvalidArgument(f"trigger must be one of {_TRIGGERS} (or empty)", field="trigger") from None


def _count(value: int, name: str, default: int, most: int) -> int:
    if value > most:
        raise InvalidArgument(f"{name} must be at most {most}", field=name)
    return value or default


def search_query_from(message: pb.SearchRequest) -> SearchQuery:
    return SearchQuery(
        text=_text(message.text, "text"),
        take=_count(message.take, "take", DEFAULT_TAKE, MAX_TAKE),
        trigger=_trigger(message.trigger),
        command=_text(message.command, "command"),
        failed_only=message.failed_only,
        since_ms=_since_ms(message),
    )


def similar_query_from(message: pb.SimilarRequest) -> SimilarQuery:
    if not (message.record_id or message.session or message.cwd):
        raise InvalidArgument(
            "record_id is required unless a session or cwd names whose last failing command to compare with",
            field="record_id",
        )
    if message.record_id and not _RECORD_ID.fullmatch(message.record_id):
        raise InvalidArgument(
            "record_id must be a record's id as `kronii critic search --json` shows it "
            "(letters, digits, - and _, at most 64), not a path or a text",
            field="record_id",
        )
    return SimilarQuery(
        record_id=_text(message.record_id, "record_id"),
        session=_text(message.session, "session"),
        cwd=_text(message.cwd, "cwd"),
        k=_count(message.k, "k", DEFAULT_K, MAX_K),
    )


def export_args_from(message: pb.ExportRequest) -> tuple[ExportQuery, bool]:
    """(the query, whether the wire carries the embeddings): unset ``redact`` is true, so sharing is
    safe by default."""
    redact = message.redact if message.HasField("redact") else True
    return ExportQuery(since_ms=_since_ms(message), redact=redact), message.embeddings


def mute_seconds_from(message: pb.MuteRequest) -> int:
    if message.seconds > MAX_MUTE_SECONDS:
        raise InvalidArgument(
            f"seconds must be at most {MAX_MUTE_SECONDS} (31 days); 0 unmutes", field="seconds"
        )
    return message.seconds
