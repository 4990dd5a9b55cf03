"""The sensor's latest snapshot, as it keeps it in Redis (ports.SensorSnapshots).

This adapter reads the stored bytes and says when Redis did not answer (ports.SnapshotUnavailable);
what the bytes mean (the sensor's Snapshot message) is the API's to decode (api.convert), handed
in as `decode` by the composition root.
"""

from __future__ import annotations

from collections.abc import Callable

import redis.asyncio as aioredis
from kronii.capture.core.desktop import SensorSnapshot
from kronii.capture.ports import SnapshotUnavailable
from kronii.runtime.rendezvous import SENSOR_SNAPSHOT_KEY

__all__ = ["SENSOR_SNAPSHOT_KEY", "SnapshotReader"]


class SnapshotReader:
    def __init__(self, redis: aioredis.Redis, decode: Callable[[bytes], SensorSnapshot]) -> None:
        self._redis = redis
        self._decode = decode

    async def read(self) -> SensorSnapshot | None:
        """The snapshot; None when the sensor has not written one yet."""
        try:
            raw = await self._redis.get(SENSOR_SNAPSHOT_KEY)
        except Exception as error:  # Redis gone, or any client error: the matcher waits for the next one
            raise SnapshotUnavailable(str(error)) from None
        if raw is None:
            return None
        return self._decode(raw if isinstance(raw, bytes) else str(raw).encode())
