"""The sensor's latest snapshot, read from Redis where the sensor keeps it, as the runner's Base snapshot."""

from __future__ import annotations

import logging

import redis.asyncio as aioredis
from kronii.activity.v1 import activity_pb2 as apb
from kronii.foundation.clock import Clock
from kronii.pipeline.core.router import BaseSnapshot
from kronii.runtime.rendezvous import SENSOR_SNAPSHOT_KEY

__all__ = ["RedisSnapshots"]

log = logging.getLogger(__name__)

_STATES = {
    apb.ACTIVITY_STATE_ACTIVE: "active",
    apb.ACTIVITY_STATE_PASSIVE: "passive",
    apb.ACTIVITY_STATE_INACTIVE: "inactive",
    apb.ACTIVITY_STATE_LOCKED: "locked",
}


class RedisSnapshots:
    def __init__(self, redis: aioredis.Redis, clock: Clock) -> None:
        self._redis = redis
        self._clock = clock

    async def latest(self) -> BaseSnapshot | None:
        try:
            raw = await self._redis.get(SENSOR_SNAPSHOT_KEY)
        except Exception as error:  # no snapshot is a weaker round, not a failed one
            log.warning("the sensor snapshot is not readable: %s", type(error).__name__)
            return None
        if not raw:
            return None
        snapshot = apb.Snapshot()
        snapshot.ParseFromString(raw.encode() if isinstance(raw, str) else raw)
        focus = snapshot.focus
        return BaseSnapshot(
            at_ms=self._clock.monotonic_ms(),
            activity_state=_STATES.get(snapshot.activity_state, "active"),
            app=focus.app_name,
            wm_class=focus.wm_class,
            title=focus.title,
            window_id=int(focus.window_id),
            pid=int(focus.pid),
            app_start_time_ms=int(focus.app_start_time),
            locked=snapshot.locked,
        )
