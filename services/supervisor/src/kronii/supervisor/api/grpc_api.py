"""gRPC: kronii.supervisor.v1.SupervisorService, the same semantics as HTTP. The token travels in
the `authorization` metadata (`Bearer <token>`); a KroniiError becomes a status with its message
(kronii.common.api_edge.KroniiErrorInterceptor, on every service's server)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeAlias, TypeVar

import grpc
from google.protobuf.message import Message
from kronii.supervisor.core.tokens import Claims
from kronii.supervisor.ports import SupervisorOperations
from kronii.supervisor.v1 import supervisor_pb2 as pb
from kronii.supervisor.v1 import supervisor_pb2_grpc as pb_grpc

__all__ = ["SupervisorServicer"]

R = TypeVar("R", bound=Message)
Ctx: TypeAlias = "grpc.aio.ServicerContext[object, object]"


def _token(context: Ctx) -> str | None:
    for key, value in context.invocation_metadata() or ():
        if key == "authorization":
            text = value.decode() if isinstance(value, bytes) else str(value)
            scheme, _, token = text.partition(" ")
            return token.strip() if scheme.lower() == "bearer" else None
    return None


class SupervisorServicer(pb_grpc.SupervisorServiceServicer):
    def __init__(self, app: SupervisorOperations) -> None:
        self._app = app

    async def _call(self, context: Ctx, run: Callable[[Claims], Awaitable[R]]) -> R:
        return await run(self._app.authenticate(_token(context)))

    async def RegisterRuntime(
        self, request: pb.RegisterRuntimeRequest, context: Ctx
    ) -> pb.RegisterRuntimeResponse:
        return await self._call(context, lambda c: self._app.register(request, c))

    async def TriggerRuntime(self, request: pb.TriggerRuntimeRequest, context: Ctx) -> pb.TriggerOutcome:
        metadata = dict(context.invocation_metadata() or ())
        request_id = str(metadata.get("x-request-id", ""))
        return await self._call(context, lambda c: self._app.trigger(request, c, request_id))

    async def HeartbeatRuntime(self, request: pb.HeartbeatRuntimeRequest, context: Ctx) -> pb.Runtime:
        return await self._call(context, lambda c: self._app.heartbeat(request, c))

    async def DeregisterRuntime(self, request: pb.DeregisterRuntimeRequest, context: Ctx) -> pb.Runtime:
        return await self._call(context, lambda c: self._app.deregister(request, c))

    async def ListRuntimes(self, request: pb.ListRuntimesRequest, context: Ctx) -> pb.ListRuntimesResponse:
        return await self._call(context, lambda c: self._app.list_runtimes(request, c))

    async def GetRuntime(self, request: pb.GetRuntimeRequest, context: Ctx) -> pb.Runtime:
        return await self._call(context, lambda c: self._app.get_runtime(request, c))

    async def GetTrigger(self, request: pb.GetTriggerRequest, context: Ctx) -> pb.TriggerOutcome:
        return await self._call(context, lambda c: self._app.get_trigger(request, c))

    async def AckTrigger(self, request: pb.AckTriggerRequest, context: Ctx) -> pb.AckTriggerResponse:
        return await self._call(context, lambda c: self._app.ack(request, c))

    async def SpawnRuntime(self, request: pb.SpawnRuntimeRequest, context: Ctx) -> pb.SpawnRuntimeResponse:
        return await self._call(context, lambda c: self._app.spawn(request, c))

    async def SetRuntimePaused(self, request: pb.SetRuntimePausedRequest, context: Ctx) -> pb.Runtime:
        return await self._call(context, lambda c: self._app.set_paused(request, c))

    async def ForceTrigger(self, request: pb.ForceTriggerRequest, context: Ctx) -> pb.TriggerOutcome:
        return await self._call(context, lambda c: self._app.force(request, c))

    async def RuntimeLogs(self, request: pb.RuntimeLogsRequest, context: Ctx) -> pb.RuntimeLogsResponse:
        return await self._call(context, lambda c: self._app.logs(request, c))

    async def UnblockThread(self, request: pb.UnblockThreadRequest, context: Ctx) -> pb.UnblockThreadResponse:
        return await self._call(context, lambda c: self._app.unblock(request, c))
