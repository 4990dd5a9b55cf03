"""Between protobuf messages (HTTP JSON, gRPC, NATS) and the use cases' commands and results.
Times: protobuf Timestamp <-> epoch seconds, on the wall clock both ways (the use cases say their
times on the wall clock and keep them on the duration clock)."""

from __future__ import annotations

import math
from collections.abc import Mapping

from google.protobuf.timestamp_pb2 import Timestamp
from kronii.scheduler.core.commands import (
    CooldownState,
    PendingWakeup,
    PlanCommand,
    PlanOutcome,
    RunCount,
    ScheduleSnapshot,
)
from kronii.scheduler.core.model import Admission, AdmitInput, Priority, TickKind
from kronii.scheduler.v1 import scheduler_pb2 as pb

__all__ = [
    "admission_message",
    "admit_input",
    "filter_messages",
    "invalid_admission",
    "plan_command",
    "plan_response",
    "schedule_message",
    "seconds",
    "timestamp",
]

_TICK_KINDS = {TickKind.PLANNED: pb.PLANNED, TickKind.SAFETY_NET: pb.SAFETY_NET}


def timestamp(at: float) -> Timestamp:
    whole = math.floor(at)
    return Timestamp(seconds=whole, nanos=round((at - whole) * 1e9) % 1_000_000_000)


def seconds(stamp: Timestamp) -> float:
    return stamp.seconds + stamp.nanos / 1e9


def plan_command(message: pb.Plan) -> PlanCommand:
    return PlanCommand(
        run_id=message.run_id,
        app=message.app,
        wakeup_at=seconds(message.next_wakeup) if message.HasField("next_wakeup") else None,
        wakeup_in_secs=message.wakeup_in_ms / 1000 if message.wakeup_in_ms else None,
        min_cooldown_secs=message.min_cooldown_ms / 1000,
        trigger_filters=tuple(message.trigger_filters),
        reason=message.reason,
    )


def admit_input(message: pb.AdmitRequest) -> AdmitInput:
    return AdmitInput(
        app=message.app,
        trigger_kind=message.trigger_kind,
        priority=Priority.HIGH if message.priority == pb.HIGH else Priority.NORMAL,
        justification=message.justification,
        dry_run=message.dry_run,
    )


def admission_message(admission: Admission) -> pb.AdmitResponse:
    return pb.AdmitResponse(
        allowed=admission.allowed,
        reason=admission.reason,
        retry_after_ms=max(0, math.ceil(admission.retry_after_secs * 1000)),
        preempted_cooldown=admission.preempted_cooldown,
        detail=admission.detail,
    )


def invalid_admission(reason: str) -> pb.AdmitResponse:
    return pb.AdmitResponse(allowed=False, reason="invalid", detail=reason)


def filter_messages(filters: Mapping[str, float]) -> list[pb.FilterView]:
    return [pb.FilterView(filter=item, until=timestamp(until)) for item, until in sorted(filters.items())]


def plan_response(outcome: PlanOutcome) -> pb.PlanResponse:
    response = pb.PlanResponse(filters=filter_messages(outcome.filters))
    if outcome.wakeup_at is not None:
        response.wakeup_id = outcome.wakeup_id
        response.wakeup_at.CopyFrom(timestamp(outcome.wakeup_at))
    if outcome.cooldown_until is not None:
        response.cooldown_until.CopyFrom(timestamp(outcome.cooldown_until))
    return response


def _wakeup_message(pending: PendingWakeup) -> pb.PendingWakeup:
    wakeup = pending.wakeup
    return pb.PendingWakeup(
        wakeup_id=wakeup.wakeup_id,
        slot=wakeup.slot,
        app=wakeup.app,
        run_id=wakeup.run_id,
        due_at=timestamp(wakeup.due_at),
        due_in_ms=round(pending.due_in_secs * 1000),
        reason=wakeup.reason,
        kind=_TICK_KINDS[wakeup.kind],
    )


def _cooldown_message(state: CooldownState | None) -> pb.CooldownView:
    if state is None:
        return pb.CooldownView(active=False)
    cooldown = state.cooldown
    return pb.CooldownView(
        active=True,
        until=timestamp(cooldown.until),
        remaining_ms=max(0, round(state.remaining_secs * 1000)),
        app=cooldown.app,
        run_id=cooldown.run_id,
        reason=cooldown.reason,
    )


def _counter(count: RunCount) -> pb.RunCounter:
    return pb.RunCounter(
        scope=count.scope, runs_last_hour=count.runs_last_hour, ceiling_per_hour=count.ceiling_per_hour
    )


def schedule_message(schedule: ScheduleSnapshot) -> pb.ScheduleView:
    return pb.ScheduleView(
        now=timestamp(schedule.now),
        wakeups=[_wakeup_message(wakeup) for wakeup in schedule.wakeups],
        cooldown=_cooldown_message(schedule.cooldown),
        filters=filter_messages(schedule.filters),
        global_runs=_counter(schedule.global_runs),
        app_runs=[_counter(count) for count in schedule.app_runs],
        global_ceiling_per_hour=schedule.global_ceiling_per_hour,
        app_ceiling_per_hour=schedule.app_ceiling_per_hour,
    )
