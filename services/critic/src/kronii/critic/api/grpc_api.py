"""gRPC: kronii.critic.v1.Critic, the same semantics as HTTP (KroniiErrors become statuses with their
sentence through the service's interceptor)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any, TypeAlias

from kronii.critic.api.convert import (
    doctor_message,
    event_from,
    export_args_from,
    mute_message,
    mute_seconds_from,
    record_message,
    reported_message,
    search_message,
    search_query_from,
    similar_message,
    similar_query_from,
    wall_clock_ms,
)
from kronii.critic.usecases.operations import CriticOperations
from kronii.critic.v1 import critic_pb2 as pb
from kronii.critic.v1 import critic_pb2_grpc as pb_grpc

__all__ = ["CriticServicer"]

Context: TypeAlias = Any  # grpc ships no stubs for the servicer context


class CriticServicer(pb_grpc.CriticServicer):
    """``operations`` gives the critic's operations once the service has started; ``clock`` is now
    in ms since the epoch (an event without `started` is stamped with it)."""

    def __init__(
        self, operations: Callable[[], CriticOperations], clock: Callable[[], int] = wall_clock_ms
    ) -> None:
        self._operations = operations
        self._clock = clock

    async def ReportEvent(self, request: pb.InvocationEvent, context: Context) -> pb.ReportEventResponse:
        event = event_from(request, self._clock())
        return reported_message(await self._operations().report(event))

    async def Search(self, request: pb.SearchRequest, context: Context) -> pb.SearchResponse:
        return search_message(await self._operations().search(search_query_from(request)))

    async def Similar(self, request: pb.SimilarRequest, context: Context) -> pb.SimilarResponse:
        return similar_message(await self._operations().similar(similar_query_from(request)))

    async def Export(self, request: pb.ExportRequest, context: Context) -> AsyncIterator[pb.InvocationRecord]:
        query, embeddings = export_args_from(request)
        async for record in self._operations().export(query):
            yield record_message(record, embeddings=embeddings)

    async def Doctor(self, request: pb.DoctorRequest, context: Context) -> pb.DoctorReport:
        return doctor_message(await self._operations().doctor())

    async def Mute(self, request: pb.MuteRequest, context: Context) -> pb.MuteState:
        return mute_message(await self._operations().mute(mute_seconds_from(request)))
