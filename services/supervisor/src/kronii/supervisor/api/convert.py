"""The supervisor's wire messages (kronii.supervisor.v1) and its core values, both ways: each
request becomes its command once here, each result its message once here."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp
from kronii.foundation.errors import InvalidArgument
from kronii.supervisor.core.offers import FailureOffer
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
from kronii.supervisor.core.threads import (
    MessageKind,
    NewMessage,
    Participant,
    Posted,
    ThreadMessage,
    ThreadView,
    unread_for,
)
from kronii.supervisor.core.trigger import (
    LIST_DEFAULT,
    Collision,
    TriggerCommand,
    TriggerOutcome,
    TriggerQuery,
)
from kronii.supervisor.usecases.offers import Handed
from kronii.supervisor.usecases.threads import ReadQuery, ThreadRead
from kronii.supervisor.v1 import supervisor_pb2 as pb

__all__ = [
    "ack",
    "ack_message",
    "collision_message",
    "failure_offer",
    "handed_message",
    "heartbeat",
    "lines_message",
    "new_message",
    "outcome_message",
    "posted_message",
    "read_message",
    "read_query",
    "register",
    "registered_message",
    "runtime_message",
    "runtime_query",
    "runtimes_message",
    "spawn",
    "spawned_message",
    "stamp",
    "thread_summary",
    "threads_message",
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
    if outcome.created_at:
        message.created_at.CopyFrom(stamp(outcome.created_at))
    if outcome.updated_at:
        message.updated_at.CopyFrom(stamp(outcome.updated_at))
    return message


def trigger_query(req: pb.ListTriggersRequest) -> TriggerQuery:
    return TriggerQuery(
        workspace_id=req.workspace_id,
        agent_id=req.agent_id,
        runtime_id=req.runtime_id,
        result=req.result,
        limit=req.limit or LIST_DEFAULT,
    )


def triggers_message(outcomes: list[TriggerOutcome]) -> pb.ListTriggersResponse:
    return pb.ListTriggersResponse(triggers=[outcome_message(outcome) for outcome in outcomes])


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


# ---- threads ----------------------------------------------------------------------------------------


def new_message(req: pb.PostMessageRequest) -> NewMessage:
    try:
        kind = MessageKind(req.kind or MessageKind.MESSAGE.value)
    except ValueError:
        raise InvalidArgument(
            f"kind {req.kind!r} is not one of {', '.join(k.value for k in MessageKind)}"
        ) from None
    return NewMessage(
        workspace_id=req.workspace_id, thread_id=req.thread_id, author="", body=req.body, kind=kind,
        to=tuple(req.to), finding_key=req.finding_key, dedupe_key=req.dedupe_key,
    )  # fmt: skip


def read_query(req: pb.ReadThreadRequest) -> ReadQuery:
    return ReadQuery(
        workspace_id=req.workspace_id, thread_id=req.thread_id, after=req.after, limit=req.limit or 100,
        peek=req.peek, wait_secs=req.wait_ms / 1000, all=req.all,
    )  # fmt: skip


def thread_message(message: ThreadMessage) -> pb.ThreadMessage:
    return pb.ThreadMessage(
        workspace_id=message.workspace_id, thread_id=message.thread_id, seq=message.seq, author=message.author,
        to=list(message.to), kind=message.kind.value, body=message.body, finding_key=message.finding_key,
        at=stamp(message.at),
    )  # fmt: skip


def _participant(p: Participant, unread: int) -> pb.ThreadParticipant:
    out = pb.ThreadParticipant(name=p.name, cursor=p.cursor, unread=unread)
    if p.seen_at is not None:
        out.seen_at.CopyFrom(stamp(p.seen_at))
    return out


def thread_summary(view: ThreadView, recent: list[ThreadMessage] | None = None) -> pb.ThreadSummary:
    """A thread; with its recent messages given, each participant's unread count among them."""
    guard = view.guard
    return pb.ThreadSummary(
        workspace_id=view.workspace_id, thread_id=view.thread_id, last_seq=view.last_seq, blocked=guard.blocked,
        blocked_reason=guard.blocked_reason, turns_without_progress=guard.turns_without_progress,
        finding_key=guard.finding_key, finding_repeats=guard.finding_repeats,
        participants=[
            _participant(p, len(unread_for(recent or [], p.name, p.cursor))) for p in view.participants
        ],
        created_at=stamp(view.created_at), updated_at=stamp(view.updated_at),
    )  # fmt: skip


def posted_message(posted: Posted) -> pb.PostMessageResponse:
    return pb.PostMessageResponse(
        message=thread_message(posted.message),
        duplicate=posted.duplicate,
        thread=thread_summary(posted.thread),
    )


def read_message(read: ThreadRead) -> pb.ReadThreadResponse:
    return pb.ReadThreadResponse(
        messages=[thread_message(m) for m in read.messages],
        thread=thread_summary(read.thread, list(read.messages)),
        cursor=read.cursor,
    )


def threads_message(views: list[ThreadView]) -> pb.ListThreadsResponse:
    return pb.ListThreadsResponse(threads=[thread_summary(v) for v in views])


# ---- the critic's offers ------------------------------------------------------------------------------


def failure_offer(message: pb.FailureOffer) -> FailureOffer:
    return FailureOffer(
        offer_id=message.offer_id, command_line=message.command_line, exit_code=message.exit_code,
        error_text=message.error_text, cwd=message.cwd, times=message.times, failure_key=message.failure_key,
        at=to_epoch(message.at) if message.HasField("at") else 0.0, workspace_id=message.workspace_id,
        agent_id=message.agent_id,
    )  # fmt: skip


def handed_message(handed: Handed) -> pb.HandOfferResponse:
    return pb.HandOfferResponse(
        offer_id=handed.offer_id, agent_id=handed.agent_id, workspace_id=handed.workspace_id,
        thread_id=handed.thread_id, seq=handed.seq, duplicate=handed.duplicate,
    )  # fmt: skip
