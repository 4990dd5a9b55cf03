"""gRPC: kronii.supervisor.v1.SupervisorService, the same semantics as HTTP. The token travels in
the `authorization` metadata (`Bearer <token>`); a KroniiError becomes a status with its message
(kronii.edge.api_edge.KroniiErrorInterceptor, on every service's server)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeAlias, TypeVar

import grpc
from google.protobuf.message import Message
from kronii.supervisor.api import convert
from kronii.supervisor.core.tokens import Claims
from kronii.supervisor.usecases.operations import SupervisorOperations
from kronii.supervisor.v1 import supervisor_pb2 as pb
from kronii.supervisor.v1 import supervisor_pb2_grpc as pb_grpc

__all__ = ["SupervisorServicer"]

R = TypeVar("R", bound=Message)
T = TypeVar("T")
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
        command = convert.register(request)
        return await self._call(
            context, lambda c: _answer(self._app.register(command, c), convert.registered_message)
        )

    async def TriggerRuntime(self, request: pb.TriggerRuntimeRequest, context: Ctx) -> pb.TriggerOutcome:
        metadata = dict(context.invocation_metadata() or ())
        command = convert.trigger_command(request, str(metadata.get("x-request-id", "")))
        return await self._call(
            context, lambda c: _answer(self._app.trigger(command, c), convert.outcome_message)
        )

    async def HeartbeatRuntime(self, request: pb.HeartbeatRuntimeRequest, context: Ctx) -> pb.Runtime:
        command = convert.heartbeat(request)
        return await self._call(
            context, lambda c: _answer(self._app.heartbeat(command, c), convert.runtime_message)
        )

    async def DeregisterRuntime(self, request: pb.DeregisterRuntimeRequest, context: Ctx) -> pb.Runtime:
        return await self._call(
            context,
            lambda c: _answer(
                self._app.deregister(request.runtime_id, request.reason, c), convert.runtime_message
            ),
        )

    async def ListRuntimes(self, request: pb.ListRuntimesRequest, context: Ctx) -> pb.ListRuntimesResponse:
        query = convert.runtime_query(request)
        return await self._call(
            context, lambda c: _answer(self._app.list_runtimes(query, c), convert.runtimes_message)
        )

    async def GetRuntime(self, request: pb.GetRuntimeRequest, context: Ctx) -> pb.Runtime:
        return await self._call(
            context, lambda c: _answer(self._app.get_runtime(request.runtime_id, c), convert.runtime_message)
        )

    async def GetTrigger(self, request: pb.GetTriggerRequest, context: Ctx) -> pb.TriggerOutcome:
        return await self._call(
            context, lambda c: _answer(self._app.get_trigger(request.trigger_id, c), convert.outcome_message)
        )

    async def ListTriggers(self, request: pb.ListTriggersRequest, context: Ctx) -> pb.ListTriggersResponse:
        query = convert.trigger_query(request)
        return await self._call(
            context, lambda c: _answer(self._app.list_triggers(query, c), convert.triggers_message)
        )

    async def AckTrigger(self, request: pb.AckTriggerRequest, context: Ctx) -> pb.AckTriggerResponse:
        command = convert.ack(request)
        return await self._call(context, lambda c: _answer(self._app.ack(command, c), convert.ack_message))

    async def SpawnRuntime(self, request: pb.SpawnRuntimeRequest, context: Ctx) -> pb.SpawnRuntimeResponse:
        command = convert.spawn(request)
        return await self._call(
            context, lambda c: _answer(self._app.spawn(command, c), convert.spawned_message)
        )

    async def SetRuntimePaused(self, request: pb.SetRuntimePausedRequest, context: Ctx) -> pb.Runtime:
        return await self._call(
            context,
            lambda c: _answer(
                self._app.set_paused(request.runtime_id, request.paused, request.reason, c),
                convert.runtime_message,
            ),
        )

    async def ForceTrigger(self, request: pb.ForceTriggerRequest, context: Ctx) -> pb.TriggerOutcome:
        return await self._call(
            context,
            lambda c: _answer(
                self._app.force(request.trigger_id, request.reason, c), convert.outcome_message
            ),
        )

    async def RuntimeLogs(self, request: pb.RuntimeLogsRequest, context: Ctx) -> pb.RuntimeLogsResponse:
        return await self._call(
            context,
            lambda c: _answer(self._app.logs(request.runtime_id, request.lines, c), convert.lines_message),
        )

    async def UnblockThread(self, request: pb.UnblockThreadRequest, context: Ctx) -> pb.UnblockThreadResponse:
        async def unblock(claims: Claims) -> pb.UnblockThreadResponse:
            was = await self._app.unblock(
                request.workspace_id, request.agent_id, request.thread_id, request.reason, claims
            )
            return pb.UnblockThreadResponse(was_blocked=was)

        return await self._call(context, unblock)

    async def PostMessage(self, request: pb.PostMessageRequest, context: Ctx) -> pb.PostMessageResponse:
        command = convert.new_message(request)
        return await self._call(
            context, lambda c: _answer(self._app.post_message(command, c), convert.posted_message)
        )

    async def ReadThread(self, request: pb.ReadThreadRequest, context: Ctx) -> pb.ReadThreadResponse:
        query = convert.read_query(request)
        return await self._call(
            context, lambda c: _answer(self._app.read_thread(query, c), convert.read_message)
        )

    async def HandOffer(self, request: pb.HandOfferRequest, context: Ctx) -> pb.HandOfferResponse:
        return await self._call(
            context,
            lambda c: _answer(
                self._app.hand_offer(request.offer_id, request.agent_id, request.workspace_id, c),
                convert.handed_message,
            ),
        )

    async def ListThreads(self, request: pb.ListThreadsRequest, context: Ctx) -> pb.ListThreadsResponse:
        return await self._call(
            context,
            lambda c: _answer(
                self._app.list_threads(request.workspace_id, request.blocked_only, c), convert.threads_message
            ),
        )


async def _answer(result: Awaitable[T], message: Callable[[T], R]) -> R:
    """The facade's answer in its wire message (api/convert.py)."""
    return message(await result)
