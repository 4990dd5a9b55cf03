"""gRPC: SensorService.GetSnapshot and WatchActivity."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Protocol

import grpc
from kronii.activity.v1 import activity_pb2 as pb
from kronii.activity.v1 import activity_pb2_grpc as pb_grpc

__all__ = ["SensorServicer"]


class _Source(Protocol):
    @property
    def watchers(self) -> set[asyncio.Queue[pb.ActivityEvent]]: ...

    async def snapshot(self) -> pb.Snapshot: ...


class SensorServicer(pb_grpc.SensorServiceServicer):
    def __init__(self, source: _Source) -> None:
        self._source = source

    async def GetSnapshot(
        self, request: pb.GetSnapshotRequest, context: grpc.aio.ServicerContext[object, object]
    ) -> pb.Snapshot:
        try:
            return await self._source.snapshot()
        except LookupError as error:
            await context.abort(grpc.StatusCode.UNAVAILABLE, f"no snapshot yet: {error}")
            raise  # abort raises; this line satisfies type checkers

    async def WatchActivity(
        self, request: pb.WatchActivityRequest, context: grpc.aio.ServicerContext[object, object]
    ) -> AsyncIterator[pb.WatchActivityResponse]:
        queue: asyncio.Queue[pb.ActivityEvent] = asyncio.Queue(maxsize=1000)
        self._source.watchers.add(queue)
        try:
            if request.include_snapshot:
                try:
                    yield pb.WatchActivityResponse(snapshot=await self._source.snapshot())
                except LookupError:
                    pass
            while True:
                yield pb.WatchActivityResponse(event=await queue.get())
        finally:
            self._source.watchers.discard(queue)
