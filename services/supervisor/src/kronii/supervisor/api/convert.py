"""Conversions between the supervisor's records and kronii.supervisor.v1 messages."""

from __future__ import annotations

from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp
from kronii.supervisor.core.model import RuntimeRecord
from kronii.supervisor.v1 import supervisor_pb2 as pb

__all__ = ["outcome_message", "runtime_message", "stamp", "to_epoch"]


def stamp(at: float) -> Timestamp:
    out = Timestamp()
    out.FromNanoseconds(int(at * 1_000_000_000))
    return out


def to_epoch(at: Timestamp) -> float:
    return at.ToNanoseconds() / 1_000_000_000


def runtime_message(record: RuntimeRecord, agent_state: str = "") -> pb.Runtime:
    message = pb.Runtime(
        runtime_id=record.runtime_id,
        agent_id=record.agent_id,
        workspace_id=record.workspace_id,
        session_id=record.session_id,
        pty_backend=record.pty_backend,
        pty_target=record.pty_target,
        pid=record.pid,
        status=record.status.value,
        kind=record.kind,
        role=record.role,
        managed=record.managed,
        paused=record.paused,
        operator_busy=record.operator_busy,
        offline_reason=record.offline_reason,
        registered_at=stamp(record.registered_at),
        agent_state=agent_state,
        cwd=record.cwd,
    )
    if record.last_heartbeat_at is not None:
        message.last_heartbeat_at.CopyFrom(stamp(record.last_heartbeat_at))
    if record.last_activity_at is not None:
        message.last_activity_at.CopyFrom(stamp(record.last_activity_at))
    return message


def outcome_message(outcome: dict[str, Any]) -> pb.TriggerOutcome:
    message = pb.TriggerOutcome(
        trigger_id=outcome.get("trigger_id", ""),
        result=outcome.get("result", ""),
        delivery_backend=outcome.get("delivery_backend", ""),
        error_code=outcome.get("error_code", ""),
        runtime_id=outcome.get("runtime_id", ""),
        fallback_used=outcome.get("fallback_used", ""),
        fallback_chain=list(outcome.get("fallback_chain", [])),
        typed_not_submitted=bool(outcome.get("typed_not_submitted", False)),
        attempts=int(outcome.get("attempts", 0)),
        duplicate=bool(outcome.get("duplicate", False)),
        agent_id=outcome.get("agent_id", ""),
        workspace_id=outcome.get("workspace_id", ""),
        thread_id=outcome.get("thread_id", ""),
        acked_by=outcome.get("acked_by", ""),
        detail=outcome.get("detail", ""),
    )
    if outcome.get("delivered_at"):
        message.delivered_at.CopyFrom(stamp(float(outcome["delivered_at"])))
    if outcome.get("deferred_until"):
        message.deferred_until.CopyFrom(stamp(float(outcome["deferred_until"])))
    return message
