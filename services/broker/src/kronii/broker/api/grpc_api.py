"""gRPC: kronii.broker.v1.Broker, the same semantics as HTTP (KroniiErrors become statuses with
their sentence through the service's interceptor). The person's calls come through the broker's
local socket like HTTP's; gRPC's peer is then the spliced loopback connection."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any, TypeAlias

from google.protobuf.timestamp_pb2 import Timestamp
from kronii.broker.api.convert import (
    action_from,
    change_message,
    grant_command,
    input_command,
    intent_command,
    lease_command,
    result_message,
    safe_point_command,
    safe_point_message,
    sign_in_command,
    state_message,
)
from kronii.broker.core.callers import Caller
from kronii.broker.core.facts import CallFacts
from kronii.broker.core.table import Event
from kronii.broker.ports import Gatekeeper
from kronii.broker.usecases.operations import BrokerOperations
from kronii.broker.v1 import broker_pb2 as pb
from kronii.broker.v1 import broker_pb2_grpc as pb_grpc
from kronii.edge.presence_rules import SESSION_HEADER, TTY_HEADER
from kronii.foundation.errors import InvalidArgument

__all__ = ["BrokerServicer"]

Context: TypeAlias = Any  # grpc ships no stubs for the servicer context


def _facts(context: Context) -> CallFacts:
    metadata = {
        key.lower(): value for key, value in context.invocation_metadata() or () if isinstance(value, str)
    }
    host, port = "", 0
    peer = context.peer() or ""
    if peer.startswith(("ipv4:", "ipv6:")):
        address = peer.split(":", 1)[1]
        host_part, _, port_part = address.rpartition(":")
        host, port = host_part.strip("[]").replace("%5B", "").replace("%5D", ""), int(port_part or 0)
    return CallFacts(
        peer_host=host,
        peer_port=port,
        authorization=metadata.get("authorization", ""),
        tty=metadata.get(TTY_HEADER, ""),
        session=metadata.get(SESSION_HEADER, ""),
    )


class BrokerServicer(pb_grpc.BrokerServicer):
    def __init__(self, edge: Callable[[], tuple[BrokerOperations, Gatekeeper]]) -> None:
        self._edge = edge

    @property
    def _operations(self) -> BrokerOperations:
        return self._edge()[0]

    async def _caller(self, context: Context, *, need_person: bool = False) -> Caller:
        return await self._edge()[1].caller(_facts(context), need_person=need_person)

    async def ListSessions(
        self, request: pb.ListSessionsRequest, context: Context
    ) -> pb.ListSessionsResponse:
        states = self._operations.sessions(await self._caller(context))
        return pb.ListSessionsResponse(sessions=[state_message(state) for state in states])

    async def GetState(self, request: pb.GetStateRequest, context: Context) -> pb.ControlState:
        return state_message(self._operations.state(await self._caller(context), request.session_id))

    async def SetUserIntent(self, request: pb.UserIntentRequest, context: Context) -> pb.ControlState:
        who = await self._caller(context, need_person=request.intent == "WAIT")
        return state_message(self._operations.user_intent(who, intent_command(request.session_id, request)))

    async def Grant(self, request: pb.GrantRequest, context: Context) -> pb.ControlState:
        who = await self._caller(context, need_person=True)
        return state_message(self._operations.grant(who, grant_command(request.session_id, request)))

    async def Extend(self, request: pb.LeaseRequest, context: Context) -> pb.ControlState:
        who = await self._caller(context, need_person=True)
        command = lease_command(request.session_id, Event.EXTEND, request)
        return state_message(self._operations.extend(who, command))

    async def _lease(self, request: pb.LeaseRequest, context: Context, event: Event) -> pb.ControlState:
        state = self._operations.lease(
            await self._caller(context), lease_command(request.session_id, event, request)
        )
        return state_message(state)

    async def Acquire(self, request: pb.LeaseRequest, context: Context) -> pb.ControlState:
        return await self._lease(request, context, Event.ACQUIRE)

    async def Renew(self, request: pb.LeaseRequest, context: Context) -> pb.ControlState:
        return await self._lease(request, context, Event.RENEW)

    async def Release(self, request: pb.LeaseRequest, context: Context) -> pb.ControlState:
        return await self._lease(request, context, Event.RELEASE)

    async def SafePoint(self, request: pb.SafePointRequest, context: Context) -> pb.SafePointResponse:
        who = await self._caller(context)
        answer = self._operations.safe_point(who, safe_point_command(request.session_id, request))
        return safe_point_message(answer)

    async def Input(self, request: pb.AgentInputRequest, context: Context) -> pb.AgentInputResult:
        who = await self._caller(context)
        if not request.HasField("action"):
            raise InvalidArgument("action is required", field="action")
        command = input_command(request.session_id, action_from(request.action), request.epoch)
        return result_message(await self._operations.input(who, command))

    async def InputStream(
        self, request_iterator: AsyncIterator[pb.AgentInputRequest], context: Context
    ) -> AsyncIterator[pb.AgentInputResult]:
        """One result per action, in order; after a drop that ends the lease the stream ends too."""
        who = await self._caller(context)
        async for request in request_iterator:
            if not request.HasField("action"):
                raise InvalidArgument("action is required", field="action")
            command = input_command(request.session_id, action_from(request.action), request.epoch)
            result = await self._operations.input(who, command)
            yield result_message(result)
            if result.dropped in ("user_control", "stopped", "stale_epoch", "lease_expired", "paused"):
                return

    async def WatchControl(
        self, request: pb.GetStateRequest, context: Context
    ) -> AsyncIterator[pb.ControlChanged]:
        async for change in self._operations.watch(await self._caller(context), request.session_id):
            yield change_message(change)

    async def BeginSignIn(self, request: pb.ChallengeRequest, context: Context) -> pb.ChallengeResponse:
        issued = await self._operations.begin_sign_in(request.client_id)
        return pb.ChallengeResponse(challenge_id=issued.challenge_id, nonce=issued.nonce)

    async def SignIn(self, request: pb.SignInRequest, context: Context) -> pb.SignInResponse:
        session = await self._operations.sign_in(sign_in_command(request))
        expires = Timestamp()
        expires.FromMilliseconds(session.expires_at_ms)
        return pb.SignInResponse(token=session.token, expires_at=expires)
