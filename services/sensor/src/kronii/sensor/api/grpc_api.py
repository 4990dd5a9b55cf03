"""gRPC: SensorService.GetSnapshot and WatchActivity, over SensorOperations."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import grpc
from kronii.activity.v1 import activity_pb2 as pb
from kronii.activity.v1 import activity_pb2_grpc as pb_grpc
from kronii.sensor.api.convert import activity_event_message, snapshot_message
from kronii.sensor.usecases.operations import SensorOperations

__all__ = ["SensorServicer"]


class SensorServicer(pb_grpc.SensorServiceServicer):
    def __init__(self, operations: Callable[[], SensorOperations]) -> None:
        self._operations = operations

    async def GetSnapshot(
        self, request: pb.GetSnapshotRequest, context: grpc.aio.ServicerContext[object, object]
    ) -> pb.Snapshot:
        try:
            return snapshot_message(await self._operations().snapshot())
        except LookupError as error:
            await context.abort(grpc.StatusCode.UNAVAILABLE, f"no snapshot yet: {error}")
            raise  # abort raises; this line satisfies type checkers

    async def WatchActivity(
        self, request: pb.WatchActivityRequest, context: grpc.aio.ServicerContext[object, object]
    ) -> AsyncIterator[pb.WatchActivityResponse]:
        operations = self._operations()
        queue = operations.watch()
        try:
            if request.include_snapshot:
                try:
                    yield pb.WatchActivityResponse(snapshot=snapshot_message(await operations.snapshot()))
                except LookupError:
                    pass
            while True:
                yield pb.WatchActivityResponse(event=activity_event_message(await queue.get()))
        finally:
            operations.unwatch(queue)
