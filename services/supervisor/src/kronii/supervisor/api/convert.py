"""The supervisor's wire messages (kronii.supervisor.v1) and its core values, both ways: each
request becomes its command once here, each result its message once here."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp
from kronii.supervisor.core.runtime_calls import (
    Ack,
    AckAnswer,
    Heartbeat,
    PaneLines,
    RegisterRuntime,
    RuntimeQuery,
    RuntimeView,
    Spawned,
    SpawnRuntime,
)
from kronii.supervisor.core.trigger import Collision, TriggerCommand, TriggerOutcome
from kronii.supervisor.v1 import supervisor_pb2 as pb

__all__ = [
    "ack",
    "ack_message",
    "collision_message",
    "heartbeat",
    "lines_message",
    "outcome_message",
    "register",
    "registered_message",
    "runtime_message",
    "runtime_query",
    "runtimes_message",
    "spawn",
    "spawned_message",
    "stamp",
    "to_epoch",
    "trigger_command",
]


def stamp(at: float) -> Timestamp:
    out = Timestamp()
    out.FromNanoseconds(int(at * 1_000_000_000))
    return out


def to_epoch(at: Timestamp) -> float:
    return at.ToNanoseconds() / 1_000_000_000


# ---- triggers ---------------------------------------------------------------------------------------


def trigger_command(req: pb.TriggerRuntimeRequest, request_id: str = "") -> TriggerCommand:
    return TriggerCommand(
        trigger_id=req.trigger_id,
        agent_id=req.agent_id,
        workspace_id=req.workspace_id,
        prompt=req.prompt,
        thread_id=req.thread_id,
        runtime_id=req.runtime_id,
        ack_timeout_ms=req.ack_timeout_ms,
        force_override=req.force_override,
        reason=req.reason,
        progress_marker=req.progress_marker,
        finding_key=req.finding_key,
        request_id=request_id,
    )


def outcome_message(outcome: TriggerOutcome) -> pb.TriggerOutcome:
    message = pb.TriggerOutcome(
        trigger_id=outcome.trigger_id,
        result=outcome.result,
        delivery_backend=outcome.delivery_backend,
        error_code=outcome.error_code,
        runtime_id=outcome.runtime_id,
        fallback_used=outcome.fallback_used,
        fallback_chain=list(outcome.fallback_chain),
        typed_not_submitted=outcome.typed_not_submitted,
        attempts=outcome.attempts,
        duplicate=outcome.duplicate,
        agent_id=outcome.agent_id,
        workspace_id=outcome.workspace_id,
        thread_id=outcome.thread_id,
        acked_by=outcome.acked_by,
        detail=outcome.detail,
    )
    if outcome.delivered_at:
        message.delivered_at.CopyFrom(stamp(outcome.delivered_at))
    if outcome.deferred_until:
        message.deferred_until.CopyFrom(stamp(outcome.deferred_until))
    return message


def collision_message(collision: Collision) -> pb.CollisionEvent:
    event = pb.CollisionEvent(
        trigger_id=collision.trigger_id,
        runtime_id=collision.runtime_id,
        agent_id=collision.agent_id,
        workspace_id=collision.workspace_id,
        fallback=collision.fallback,
    )
    if collision.busy_since is not None:
        event.busy_since.FromNanoseconds(int(collision.busy_since * 1e9))
    event.at.FromNanoseconds(int(collision.at * 1e9))
    return event


# ---- the registry ----------------------------------------------------------------------------------


def runtime_message(view: RuntimeView) -> pb.Runtime:
    record = view.record
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
        agent_state=view.agent_state,
        cwd=record.cwd,
    )
    if record.last_heartbeat_at is not None:
        message.last_heartbeat_at.CopyFrom(stamp(record.last_heartbeat_at))
    if record.last_activity_at is not None:
        message.last_activity_at.CopyFrom(stamp(record.last_activity_at))
    return message


def register(req: pb.RegisterRuntimeRequest) -> RegisterRuntime:
    return RegisterRuntime(
        agent_id=req.agent_id,
        workspace_id=req.workspace_id,
        pty_target=req.pty_target,
        pty_backend=req.pty_backend,
        pid=req.pid,
        session_id=req.session_id,
        kind=req.kind,
        role=req.role,
        cwd=req.cwd,
    )


def registered_message(view: RuntimeView) -> pb.RegisterRuntimeResponse:
    return pb.RegisterRuntimeResponse(
        runtime_id=view.record.runtime_id, status=view.record.status.value, runtime=runtime_message(view)
    )


def heartbeat(req: pb.HeartbeatRuntimeRequest) -> Heartbeat:
    activity = to_epoch(req.last_activity_at) if req.HasField("last_activity_at") else None
    return Heartbeat(runtime_id=req.runtime_id, status=req.status, last_activity_at=activity)


def runtime_query(req: pb.ListRuntimesRequest) -> RuntimeQuery:
    return RuntimeQuery(
        workspace_id=req.workspace_id, agent_id=req.agent_id, include_offline=req.include_offline
    )


def runtimes_message(views: list[RuntimeView]) -> pb.ListRuntimesResponse:
    return pb.ListRuntimesResponse(runtimes=[runtime_message(view) for view in views])


def spawn(req: pb.SpawnRuntimeRequest) -> SpawnRuntime:
    return SpawnRuntime(
        agent_id=req.agent_id,
        workspace_id=req.workspace_id,
        command=tuple(req.command),
        kind=req.kind,
        role=req.role,
        cwd=req.cwd,
        session_id=req.session_id,
    )


def spawned_message(spawned: Spawned) -> pb.SpawnRuntimeResponse:
    return pb.SpawnRuntimeResponse(
        runtime=runtime_message(spawned.runtime), attach_command=spawned.attach_command
    )


def lines_message(lines: PaneLines) -> pb.RuntimeLogsResponse:
    return pb.RuntimeLogsResponse(runtime_id=lines.runtime_id, lines=list(lines.lines))


def ack(req: pb.AckTriggerRequest) -> Ack:
    return Ack(trigger_id=req.trigger_id, runtime_id=req.runtime_id)


def ack_message(answer: AckAnswer) -> pb.AckTriggerResponse:
    return pb.AckTriggerResponse(accepted=answer.accepted, trigger_id=answer.trigger_id)
