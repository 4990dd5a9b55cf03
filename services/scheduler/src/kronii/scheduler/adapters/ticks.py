"""The scheduler's Ticks on NATS (`kronii.scheduler.tick`): a fired wake-up as a `Tick` message."""

from __future__ import annotations

import math

from google.protobuf.timestamp_pb2 import Timestamp
from kronii.scheduler.core.commands import FiredTick
from kronii.scheduler.core.model import TickKind
from kronii.scheduler.v1 import scheduler_pb2 as pb
from kronii.stores import subjects
from kronii.stores.bus import Bus

__all__ = ["BusTicks", "tick_message"]

_TICK_KINDS = {TickKind.PLANNED: pb.PLANNED, TickKind.SAFETY_NET: pb.SAFETY_NET}


def _timestamp(at: float) -> Timestamp:
    whole = math.floor(at)
    return Timestamp(seconds=whole, nanos=round((at - whole) * 1e9) % 1_000_000_000)


def tick_message(tick: FiredTick) -> pb.Tick:
    return pb.Tick(
        wakeup_id=tick.wakeup_id,
        due_at=_timestamp(tick.due_at),
        fired_at=_timestamp(tick.fired_at),
        reason=tick.reason,
        app=tick.app,
        run_id=tick.run_id,
        kind=_TICK_KINDS[tick.kind],
    )


class BusTicks:
    """Publishes each Tick; a publish that is not confirmed raises (the wake-up then fires again)."""

    def __init__(self, bus: Bus) -> None:
        self._bus = bus

    async def publish(self, tick: FiredTick) -> None:
        await self._bus.publish(subjects.SCHEDULER_TICK, tick_message(tick))
