"""Between protobuf messages and the core's values. Times: protobuf Timestamp <-> epoch seconds.

The core's times are on the scheduler's duration clock (monotonic, anchored to the epoch at start);
what a message carries is on the wall clock. `wall_offset` is wall time minus duration-clock time,
read once per request: added to a time on the way out, taken off a wall time on the way in."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from google.protobuf.timestamp_pb2 import Timestamp
from kronii.scheduler.core.model import (
    Admission,
    AdmitInput,
    AppliedPlan,
    Cooldown,
    PlanInput,
    Priority,
    TickKind,
    WakeUp,
)
from kronii.scheduler.v1 import scheduler_pb2 as pb

__all__ = [
    "admission_message",
    "admit_input",
    "cooldown_message",
    "counter",
    "filter_messages",
    "invalid_admission",
    "plan_input",
    "plan_response",
    "seconds",
    "tick_message",
    "timestamp",
    "wakeup_message",
]

_TICK_KINDS = {TickKind.PLANNED: pb.PLANNED, TickKind.SAFETY_NET: pb.SAFETY_NET}


def timestamp(at: float) -> Timestamp:
    whole = math.floor(at)
    return Timestamp(seconds=whole, nanos=round((at - whole) * 1e9) % 1_000_000_000)


def seconds(stamp: Timestamp) -> float:
    return stamp.seconds + stamp.nanos / 1e9


def plan_input(message: pb.Plan, wall_offset: float = 0.0) -> PlanInput:
    wall_wakeup = seconds(message.next_wakeup) if message.HasField("next_wakeup") else None
    return PlanInput(
        run_id=message.run_id,
        app=message.app,
        wakeup_at=wall_wakeup - wall_offset if wall_wakeup is not None else None,
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


def filter_messages(filters: Mapping[str, float], wall_offset: float = 0.0) -> list[pb.FilterView]:
    return [
        pb.FilterView(filter=item, until=timestamp(until + wall_offset))
        for item, until in sorted(filters.items())
    ]


def plan_response(applied: AppliedPlan, wall_offset: float = 0.0) -> pb.PlanResponse:
    response = pb.PlanResponse(filters=filter_messages(applied.filters, wall_offset))
    if applied.wakeup is not None:
        response.wakeup_id = applied.wakeup.wakeup_id
        response.wakeup_at.CopyFrom(timestamp(applied.wakeup.due_at + wall_offset))
    if applied.cooldown is not None:
        response.cooldown_until.CopyFrom(timestamp(applied.cooldown.until + wall_offset))
    return response


def tick_message(wakeup: WakeUp, fired_at: float, wall_offset: float = 0.0) -> pb.Tick:
    return pb.Tick(
        wakeup_id=wakeup.wakeup_id,
        due_at=timestamp(wakeup.due_at + wall_offset),
        fired_at=timestamp(fired_at + wall_offset),
        reason=wakeup.reason,
        app=wakeup.app,
        run_id=wakeup.run_id,
        kind=_TICK_KINDS[wakeup.kind],
    )


def wakeup_message(wakeup: WakeUp, now: float, wall_offset: float = 0.0) -> pb.PendingWakeup:
    return pb.PendingWakeup(
        wakeup_id=wakeup.wakeup_id,
        slot=wakeup.slot,
        app=wakeup.app,
        run_id=wakeup.run_id,
        due_at=timestamp(wakeup.due_at + wall_offset),
        due_in_ms=round((wakeup.due_at - now) * 1000),
        reason=wakeup.reason,
        kind=_TICK_KINDS[wakeup.kind],
    )


def cooldown_message(cooldown: Cooldown | None, now: float, wall_offset: float = 0.0) -> pb.CooldownView:
    if cooldown is None:
        return pb.CooldownView(active=False)
    return pb.CooldownView(
        active=True,
        until=timestamp(cooldown.until + wall_offset),
        remaining_ms=max(0, round((cooldown.until - now) * 1000)),
        app=cooldown.app,
        run_id=cooldown.run_id,
        reason=cooldown.reason,
    )


def counter(scope: str, runs: Sequence[float], ceiling: int) -> pb.RunCounter:
    return pb.RunCounter(scope=scope, runs_last_hour=len(runs), ceiling_per_hour=ceiling)
