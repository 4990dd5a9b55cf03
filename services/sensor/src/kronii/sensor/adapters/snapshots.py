"""The latest activity snapshot, kept in Redis as a serialized protobuf message (the form the
pipeline and capture read under the same key)."""

from __future__ import annotations

import redis.asyncio as aioredis
from kronii.activity.v1 import activity_pb2 as pb
from kronii.runtime.rendezvous import SENSOR_SNAPSHOT_KEY
from kronii.sensor.api.convert import snapshot_from_message, snapshot_message
from kronii.sensor.core.snapshot import SensorSnapshot
from kronii.sensor.ports import StoreFailed

__all__ = ["SNAPSHOT_KEY", "RedisSnapshotStore"]

SNAPSHOT_KEY = SENSOR_SNAPSHOT_KEY


class RedisSnapshotStore:
    def __init__(self, client: aioredis.Redis) -> None:
        self._redis = client

    async def put(self, snapshot: pb.Snapshot) -> None:
        await self._redis.set(SNAPSHOT_KEY, snapshot.SerializeToString())

    async def get(self) -> pb.Snapshot | None:
        raw = await self._redis.get(SNAPSHOT_KEY)
        if raw is None:
            return None
        snapshot = pb.Snapshot()
        snapshot.ParseFromString(raw if isinstance(raw, bytes) else raw.encode())
        return snapshot

    async def keep(self, snapshot: SensorSnapshot) -> None:
        """Raises StoreFailed when Redis did not take it."""
        try:
            await self.put(snapshot_message(snapshot))
        except Exception as error:
            raise StoreFailed(str(error)) from error

    async def latest(self) -> SensorSnapshot | None:
        stored = await self.get()
        return snapshot_from_message(stored) if stored is not None else None
