"""HTTP: the seed's routes under /sessions/{id} (the state, user_intent, control/grant|acquire|renew|
release, agent/safe_point, agent/input) and the agents' sign-in under /v1/broker/agents. Bodies are
broker.proto's messages in JSON; `{id}` may be `current`. Who is calling comes from the transport
(the Gatekeeper), never from the body."""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Request
from google.protobuf.message import Message
from kronii.broker.api.convert import (
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
from kronii.desktop.input_actions import parse_action
from kronii.edge.api_edge import as_json, read_body, read_json_object
from kronii.edge.openapi import errors, json_body, proto_body
from kronii.edge.presence_rules import SESSION_HEADER, TTY_HEADER
from kronii.foundation.errors import InvalidArgument

__all__ = ["broker_router"]

# The caller as the gatekeeper knows it, from a request (need_person=True: only the desktop user).
_CallerOf = Callable[..., Awaitable[Caller]]

_ACTION_SCHEMA = {
    "type": "object",
    "properties": {
        "kind": {"type": "string", "enum": ["key", "type", "click", "move", "scroll"]},
        "keys": {"type": "string"},
        "text": {"type": "string"},
        "x": {"type": "integer"},
        "y": {"type": "integer"},
        "button": {"type": "integer"},
        "dx": {"type": "integer"},
        "dy": {"type": "integer"},
        "epoch": {"type": "integer"},
    },
    "required": ["kind"],
}


def _facts(request: Request) -> CallFacts:
    client = request.client
    return CallFacts(
        peer_host=client.host if client else "",
        peer_port=client.port if client else 0,
        authorization=request.headers.get("authorization", ""),
        tty=request.headers.get(TTY_HEADER, ""),
        session=request.headers.get(SESSION_HEADER, ""),
    )


def _json(message: Message) -> dict[str, Any]:
    return as_json(message)


def broker_router(edge: Callable[[], tuple[BrokerOperations, Gatekeeper]]) -> APIRouter:
    """``edge`` gives the operations and the gatekeeper once the service has started."""
    router = APIRouter(tags=["broker"])

    async def caller(request: Request, *, need_person: bool = False) -> Caller:
        return await edge()[1].caller(_facts(request), need_person=need_person)

    def operations() -> BrokerOperations:
        return edge()[0]

    _session_routes(router, operations, caller)
    _person_routes(router, operations, caller)
    _agent_routes(router, operations, caller)
    _sign_in_routes(router, operations)
    return router


def _session_routes(router: APIRouter, operations: Callable[[], BrokerOperations], caller: _CallerOf) -> None:
    """Reading the sessions' control state, for anyone the gatekeeper knows."""

    @router.get("/sessions")
    async def list_sessions(request: Request) -> dict[str, Any]:
        """Every desktop session this broker guards (one: its display)."""
        states = operations().sessions(await caller(request))
        return _json(pb.ListSessionsResponse(sessions=[state_message(state) for state in states]))

    @router.get("/sessions/{session_id}", responses=errors(404))
    async def get_state(request: Request, session_id: str) -> dict[str, Any]:
        """The seed's control state of one session."""
        return _json(state_message(operations().state(await caller(request), session_id)))


def _person_routes(router: APIRouter, operations: Callable[[], BrokerOperations], caller: _CallerOf) -> None:
    """What the person at the desktop says: an intent (anyone may stop agents), a grant, more time."""

    @router.post(
        "/sessions/{session_id}/user_intent",
        openapi_extra=proto_body(pb.UserIntentRequest),
        responses=errors(400, 403, 404),
    )
    async def user_intent(request: Request, session_id: str) -> dict[str, Any]:
        """WAIT (only the desktop user), SAFE_INTERRUPT or STOP_NOW (anyone: they only stop agents)."""
        body = await read_body(request, pb.UserIntentRequest(), session_id=session_id)
        who = await caller(request, need_person=body.intent == "WAIT")
        return _json(state_message(operations().user_intent(who, intent_command(session_id, body))))

    @router.post(
        "/sessions/{session_id}/control/grant",
        openapi_extra=proto_body(pb.GrantRequest),
        responses=errors(400, 403, 404, 409),
    )
    async def grant(request: Request, session_id: str) -> dict[str, Any]:
        """The desktop user grants an agent a lease; never an agent, never over the network."""
        body = await read_body(request, pb.GrantRequest(), session_id=session_id)
        who = await caller(request, need_person=True)
        return _json(state_message(operations().grant(who, grant_command(session_id, body))))

    @router.post(
        "/sessions/{session_id}/control/extend",
        openapi_extra=proto_body(pb.LeaseRequest),
        responses=errors(400, 403, 404, 409),
    )
    async def extend(request: Request, session_id: str) -> dict[str, Any]:
        """The desktop user gives the agent that holds the desktop more time (same grant, same epoch)."""
        body = await read_body(request, pb.LeaseRequest(), session_id=session_id)
        who = await caller(request, need_person=True)
        command = lease_command(session_id, Event.EXTEND, body)
        return _json(state_message(operations().extend(who, command)))


def _agent_routes(router: APIRouter, operations: Callable[[], BrokerOperations], caller: _CallerOf) -> None:
    """What the agents ask: a lease taken, renewed or released, a safe point, one input action."""

    for verb, event in (("acquire", Event.ACQUIRE), ("renew", Event.RENEW), ("release", Event.RELEASE)):
        router.add_api_route(
            f"/sessions/{{session_id}}/control/{verb}",
            _lease_route(operations, caller, event),
            methods=["POST"],
            name=verb,
            openapi_extra=proto_body(pb.LeaseRequest),
            responses=errors(400, 401, 404, 409),
        )

    @router.post(
        "/sessions/{session_id}/agent/safe_point",
        openapi_extra=proto_body(pb.SafePointRequest),
        responses=errors(400, 401, 404),
    )
    async def safe_point(request: Request, session_id: str) -> dict[str, Any]:
        """The holder at a step boundary: CONTINUE, PAUSE or STOP; the agent must obey."""
        body = await read_body(request, pb.SafePointRequest(), session_id=session_id)
        answer = operations().safe_point(await caller(request), safe_point_command(session_id, body))
        return _json(safe_point_message(answer))

    @router.post(
        "/sessions/{session_id}/agent/input",
        openapi_extra=json_body(_ACTION_SCHEMA),
        responses=errors(400, 401, 404, 503),
    )
    async def agent_input(request: Request, session_id: str) -> dict[str, Any]:
        """One action; `injected` is true once the X server has its events, else `dropped` says why."""
        data = await read_json_object(request, what="input action", empty_ok=False)
        epoch = data.pop("epoch", 0)
        if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
            raise InvalidArgument("epoch must be a whole number of at least 0", field="epoch")
        action = parse_action(data)
        result = await operations().input(await caller(request), input_command(session_id, action, epoch))
        return _json(result_message(result))


def _sign_in_routes(router: APIRouter, operations: Callable[[], BrokerOperations]) -> None:
    """The agents' sign-in: a challenge, then a signature over it for a session token."""

    @router.post(
        "/v1/broker/agents/challenge", openapi_extra=proto_body(pb.ChallengeRequest), responses=errors(400)
    )
    async def challenge(request: Request) -> dict[str, Any]:
        """A one-time nonce for a registered agent to sign with its Ed25519 key."""
        body = await read_body(request, pb.ChallengeRequest())
        issued = await operations().begin_sign_in(body.client_id)
        return {"challenge_id": issued.challenge_id, "nonce": base64.b64encode(issued.nonce).decode()}

    @router.post(
        "/v1/broker/agents/sign-in", openapi_extra=proto_body(pb.SignInRequest), responses=errors(400, 401)
    )
    async def sign_in(request: Request) -> dict[str, Any]:
        """The signature over the nonce; a session token for the agent's calls."""
        body = await read_body(request, pb.SignInRequest())
        session = await operations().sign_in(sign_in_command(body))
        expires = datetime.fromtimestamp(session.expires_at_ms / 1000, UTC).isoformat()
        return {"token": session.token, "expires_at": expires}


def _lease_route(operations: Callable[[], BrokerOperations], caller: _CallerOf, event: Event) -> Any:
    async def lease(request: Request, session_id: str) -> dict[str, Any]:
        body = await read_body(request, pb.LeaseRequest(), session_id=session_id)
        state = operations().lease(await caller(request), lease_command(session_id, event, body))
        return _json(state_message(state))

    lease.__doc__ = {
        Event.ACQUIRE: "An agent takes a session nobody watches (P3); refused while a person is attached.",
        Event.RENEW: "The holder renews its lease; refused while the user asks agents to pause.",
        Event.RELEASE: "The holder gives control back to the user.",
    }[event]
    return lease
