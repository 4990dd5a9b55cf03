"""HTTP: the trigger API and the registry under /v1, the same semantics as gRPC. JSON bodies use
the proto field names; a bad body or argument is a 4xx with the reason in `detail`
(kronii.edge.api_edge renders every KroniiError)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from google.protobuf.message import Message
from kronii.edge.api_edge import as_json, read_body
from kronii.edge.limits import PathId
from kronii.edge.openapi import errors, message_schema, proto_body
from kronii.foundation.errors import InvalidArgument
from kronii.supervisor.api import convert
from kronii.supervisor.core.identity import NONCE_MAX_CHARS, NONCE_MIN_CHARS, check_nonce
from kronii.supervisor.core.runtime_calls import RuntimeQuery
from kronii.supervisor.core.tokens import Claims
from kronii.supervisor.core.trigger import LIST_DEFAULT, LIST_LIMIT, TriggerQuery
from kronii.supervisor.usecases.operations import SupervisorOperations
from kronii.supervisor.v1 import supervisor_pb2 as pb
from pydantic import BaseModel

__all__ = ["supervisor_router"]

T = TypeVar("T")
Operations = Callable[[], SupervisorOperations]


class IdentityProof(BaseModel):
    service: str
    proof: str


def _token(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


# Every call verifies the caller's signed token and may meet any of these (KroniiError's kinds).
_ERRORS = errors(404, 409)


def _proto(message: type[Message], *path: str) -> dict[str, Any]:
    """The body's schema: the proto's fields, less those the path gives."""
    schema = proto_body(message)
    properties = schema["requestBody"]["content"]["application/json"]["schema"]["properties"]
    for name in path:
        properties.pop(name, None)
    return schema


def _spawn_body() -> dict[str, Any]:
    schema = message_schema(pb.SpawnRuntimeRequest.DESCRIPTOR)
    schema["properties"]["kind"]["description"] = (
        "one of the configured agent kinds (codex, claude, python, generic, ...)"
    )
    schema["properties"]["cwd"]["description"] = "an existing directory; empty for the supervisor's own"
    return {"requestBody": {"required": False, "content": {"application/json": {"schema": schema}}}}


async def _answer(result: Awaitable[T], message: Callable[[T], Message]) -> Message:
    """The facade's answer in its wire message (api/convert.py)."""
    return message(await result)


async def _paused(app: SupervisorOperations, req: pb.SetRuntimePausedRequest, claims: Claims) -> pb.Runtime:
    view = await app.set_paused(req.runtime_id, req.paused, req.reason, claims)
    return convert.runtime_message(view)


class Call(Protocol):
    """Authenticate the request, run the operation with the caller's claims, answer in JSON."""

    async def __call__(
        self, request: Request, run: Callable[[Claims], Awaitable[Message]], status: int = 200
    ) -> JSONResponse: ...


def supervisor_router(app: Operations) -> APIRouter:
    """The routes; `app` gives the facade (Unavailable until the service has started)."""
    router = APIRouter(prefix="/v1", tags=["supervisor"], responses=_ERRORS)

    async def call(
        request: Request, run: Callable[[Claims], Awaitable[Message]], status: int = 200
    ) -> JSONResponse:
        result = await run(app().authenticate(_token(request)))
        return JSONResponse(as_json(result), status_code=status)

    _trigger_routes(router, app, call)
    _runtime_routes(router, app, call)
    _runtime_state_routes(router, app, call)
    _identity_route(router, app)
    _thread_routes(router, app, call)
    return router


def _trigger_routes(router: APIRouter, app: Operations, call: Call) -> None:
    @router.post("/triggers", openapi_extra=_proto(pb.TriggerRuntimeRequest))
    async def trigger_runtime(request: Request) -> JSONResponse:
        """trigger_runtime (seed 002, 10.2): result delivered | already_active | deferred | timeout | failed."""
        req = await read_body(request, pb.TriggerRuntimeRequest())
        request_id = request.headers.get("x-request-id") or uuid.uuid4().hex[:16]
        command = convert.trigger_command(req, request_id)
        return await call(request, lambda c: _answer(app().trigger(command, c), convert.outcome_message))

    @router.get("/triggers")
    async def list_triggers(
        request: Request,
        workspace_id: str = Query("", max_length=128),
        agent_id: str = Query("", max_length=128),
        runtime_id: str = Query("", max_length=128),
        result: str = Query("", max_length=32, description="one result; deferred: the queue"),
        limit: int = Query(LIST_DEFAULT, ge=1, le=LIST_LIMIT),
    ) -> JSONResponse:
        """The recent triggers, the most recently changed first, with their true outcomes."""
        query = TriggerQuery(
            workspace_id=workspace_id, agent_id=agent_id, runtime_id=runtime_id, result=result, limit=limit
        )
        return await call(request, lambda c: _answer(app().list_triggers(query, c), convert.triggers_message))

    @router.get("/triggers/{trigger_id}")
    async def get_trigger(trigger_id: PathId, request: Request) -> JSONResponse:
        return await call(
            request, lambda c: _answer(app().get_trigger(trigger_id, c), convert.outcome_message)
        )

    @router.post("/triggers/{trigger_id}/force", openapi_extra=_proto(pb.ForceTriggerRequest, "trigger_id"))
    async def force_trigger(trigger_id: PathId, request: Request) -> JSONResponse:
        req = await read_body(request, pb.ForceTriggerRequest(), trigger_id=trigger_id)
        return await call(
            request, lambda c: _answer(app().force(req.trigger_id, req.reason, c), convert.outcome_message)
        )

    @router.post("/acks", openapi_extra=_proto(pb.AckTriggerRequest))
    async def ack_trigger(request: Request) -> JSONResponse:
        req = await read_body(request, pb.AckTriggerRequest())
        return await call(request, lambda c: _answer(app().ack(convert.ack(req), c), convert.ack_message))


def _runtime_routes(router: APIRouter, app: Operations, call: Call) -> None:
    @router.post("/runtimes", status_code=201, openapi_extra=_proto(pb.RegisterRuntimeRequest))
    async def register_runtime(request: Request) -> JSONResponse:
        req = await read_body(request, pb.RegisterRuntimeRequest())
        return await call(
            request,
            lambda c: _answer(app().register(convert.register(req), c), convert.registered_message),
            status=201,
        )

    @router.post("/runtimes/spawn", status_code=201, openapi_extra=_spawn_body())
    async def spawn_runtime(request: Request) -> JSONResponse:
        req = await read_body(request, pb.SpawnRuntimeRequest())
        return await call(
            request,
            lambda c: _answer(app().spawn(convert.spawn(req), c), convert.spawned_message),
            status=201,
        )

    @router.get("/runtimes")
    async def list_runtimes(
        request: Request,
        workspace_id: str = Query("", max_length=128),
        agent_id: str = Query("", max_length=128),
        include_offline: bool = False,
    ) -> JSONResponse:
        query = RuntimeQuery(workspace_id=workspace_id, agent_id=agent_id, include_offline=include_offline)
        return await call(request, lambda c: _answer(app().list_runtimes(query, c), convert.runtimes_message))

    @router.get("/runtimes/{runtime_id}")
    async def get_runtime(runtime_id: PathId, request: Request) -> JSONResponse:
        return await call(
            request, lambda c: _answer(app().get_runtime(runtime_id, c), convert.runtime_message)
        )


def _runtime_state_routes(router: APIRouter, app: Operations, call: Call) -> None:
    @router.post(
        "/runtimes/{runtime_id}/heartbeat", openapi_extra=_proto(pb.HeartbeatRuntimeRequest, "runtime_id")
    )
    async def heartbeat_runtime(runtime_id: PathId, request: Request) -> JSONResponse:
        req = await read_body(request, pb.HeartbeatRuntimeRequest(), runtime_id=runtime_id)
        return await call(
            request, lambda c: _answer(app().heartbeat(convert.heartbeat(req), c), convert.runtime_message)
        )

    @router.post(
        "/runtimes/{runtime_id}/deregister", openapi_extra=_proto(pb.DeregisterRuntimeRequest, "runtime_id")
    )
    async def deregister_runtime(runtime_id: PathId, request: Request) -> JSONResponse:
        req = await read_body(request, pb.DeregisterRuntimeRequest(), runtime_id=runtime_id)
        return await call(
            request,
            lambda c: _answer(app().deregister(req.runtime_id, req.reason, c), convert.runtime_message),
        )

    @router.post(
        "/runtimes/{runtime_id}/pause",
        openapi_extra=_proto(pb.SetRuntimePausedRequest, "runtime_id", "paused"),
    )
    async def pause_runtime(runtime_id: PathId, request: Request) -> JSONResponse:
        req = await read_body(request, pb.SetRuntimePausedRequest(), runtime_id=runtime_id, paused=True)
        return await call(request, lambda c: _paused(app(), req, c))

    @router.post(
        "/runtimes/{runtime_id}/resume",
        openapi_extra=_proto(pb.SetRuntimePausedRequest, "runtime_id", "paused"),
    )
    async def resume_runtime(runtime_id: PathId, request: Request) -> JSONResponse:
        req = await read_body(request, pb.SetRuntimePausedRequest(), runtime_id=runtime_id, paused=False)
        return await call(request, lambda c: _paused(app(), req, c))

    @router.get("/runtimes/{runtime_id}/logs")
    async def runtime_logs(
        runtime_id: PathId, request: Request, lines: int = Query(50, ge=1, le=2000)
    ) -> JSONResponse:
        return await call(request, lambda c: _answer(app().logs(runtime_id, lines, c), convert.lines_message))


def _identity_route(router: APIRouter, app: Operations) -> None:
    @router.get("/identity", response_model=IdentityProof)
    async def identity(
        nonce: str = Query(
            "",
            description=f"required: {NONCE_MIN_CHARS} to {NONCE_MAX_CHARS} hex digits, fresh for each request",
        ),
    ) -> IdentityProof:
        """Unauthenticated: proves this server holds this host's token secret without revealing it.
        `proof` is hex HMAC-SHA256(HMAC-SHA256(secret, "identity"), "kronii-supervisor-identity:" +
        nonce + ":" + the port it listens on); `kronii agents` checks it before sending a token minted from the local secret."""
        try:
            check_nonce(nonce)
        except ValueError as error:
            raise InvalidArgument(str(error)) from None
        return IdentityProof(service="supervisor", proof=app().identity_proof(nonce))


def _thread_routes(router: APIRouter, app: Operations, call: Call) -> None:
    @router.post("/threads/unblock", openapi_extra=_proto(pb.UnblockThreadRequest))
    async def unblock_thread(request: Request) -> JSONResponse:
        """With workspace_id: the thread's own block (the orchestrator's guard); with agent_id: the
        trigger guard of that agent on the thread."""
        req = await read_body(request, pb.UnblockThreadRequest())
        return await call(request, lambda c: _unblocked(app(), req, c))

    @router.post("/threads/messages", status_code=201, openapi_extra=_proto(pb.PostMessageRequest))
    async def post_message(request: Request) -> JSONResponse:
        """post_message: durable before the answer; a repeated dedupe_key answers the first (200)."""
        req = await read_body(request, pb.PostMessageRequest())
        command = convert.new_message(req)
        posted = await call(
            request, lambda c: _answer(app().post_message(command, c), convert.posted_message), status=201
        )
        if json.loads(bytes(posted.body)).get("duplicate"):
            posted.status_code = 200
        return posted

    @router.post("/threads/read", openapi_extra=_proto(pb.ReadThreadRequest))
    async def read_thread(request: Request) -> JSONResponse:
        """The caller's new messages (its cursor moves past them unless peek); wait_ms waits for one
        addressed to it."""
        req = await read_body(request, pb.ReadThreadRequest())
        query = convert.read_query(req)
        return await call(request, lambda c: _answer(app().read_thread(query, c), convert.read_message))

    @router.post("/offers/hand", openapi_extra=_proto(pb.HandOfferRequest))
    async def hand_offer(request: Request) -> JSONResponse:
        """The person's yes to the critic's offer (empty offer_id: the latest open one): the failure is
        posted to the agent's hand-over thread and the orchestrator wakes it."""
        req = await read_body(request, pb.HandOfferRequest())
        return await call(
            request,
            lambda c: _answer(
                app().hand_offer(req.offer_id, req.agent_id, req.workspace_id, c), convert.handed_message
            ),
        )

    @router.get("/threads")
    async def list_threads(
        request: Request, workspace_id: str = Query("", max_length=128), blocked_only: bool = False
    ) -> JSONResponse:
        return await call(
            request,
            lambda c: _answer(app().list_threads(workspace_id, blocked_only, c), convert.threads_message),
        )


async def _unblocked(app: SupervisorOperations, req: pb.UnblockThreadRequest, claims: Claims) -> Message:
    was = await app.unblock(req.workspace_id, req.agent_id, req.thread_id, req.reason, claims)
    return pb.UnblockThreadResponse(was_blocked=was)
