"""HTTP: the gRPC operations as JSON under /v1/capture/..., plus GET /v1/screenshots/{id}?token=...
(image/png). Every call but the agent handshake needs `authorization: Bearer <session token>`.
Errors are 4xx/5xx with {"detail": sentence} (and "field" for a bad request field). A capture request
is taken only while the service says it is ready (503 with Retry-After otherwise)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from kronii.capture.api.convert import meta_message, result_message, status_message
from kronii.capture.core.capabilities import Capability, names
from kronii.capture.core.commands import CaptureRequest
from kronii.capture.core.identity import Identity, caller_key, require
from kronii.capture.usecases.operations import CaptureOperations
from kronii.edge.api_edge import as_json, error_response
from kronii.edge.limits import PathId
from kronii.edge.openapi import errors
from kronii.foundation.errors import InvalidArgument, KroniiError, PermissionDenied
from kronii.runtime.readiness import require_ready
from pydantic import BaseModel, Field

__all__ = ["OperationsSource", "capture_router"]

T = TypeVar("T")

# The operations once the service has started; before that it raises Unavailable.
OperationsSource = Callable[[], CaptureOperations]
Action = Callable[[CaptureOperations, Identity], Awaitable[T]]


_U32 = 2**32 - 1
_TEXT = 256  # app names, requesters, enum names: longer is not one
# What sessions accept as a client id; declared here so a bad one is refused before any lookup.
_CLIENT_ID = r"^[A-Za-z0-9._:@-]{1,64}$"
# An enum by name or by number.
_EnumValue = Annotated[str, Field(max_length=_TEXT)] | Annotated[int, Field(ge=0, le=_U32)]


class CaptureRequestBody(BaseModel):
    # The bounds of capture.proto's field types.
    process_id: int = Field(0, ge=0, le=_U32)
    app_name: str = Field("", max_length=_TEXT)
    app_start_time: int = Field(0, ge=-(2**63), le=2**63 - 1)
    window_id: int = Field(0, ge=0, le=2**64 - 1)
    bypass: _EnumValue = 0
    burst_count: int = Field(0, ge=0, le=_U32)
    burst_interval_ms: int = Field(0, ge=0, le=_U32)
    priority: _EnumValue = 0
    ttl_ms: int = Field(0, ge=0, le=_U32)
    requester: str = Field("", max_length=_TEXT)

    def command(self) -> CaptureRequest:
        return CaptureRequest(
            process_id=self.process_id,
            app_name=self.app_name,
            app_start_time_ms=self.app_start_time,
            window_id=self.window_id,
            bypass=self.bypass,
            burst_count=self.burst_count,
            burst_interval_ms=self.burst_interval_ms,
            priority=self.priority,
            ttl_ms=self.ttl_ms,
            requester=self.requester,
        )


class ChallengeBody(BaseModel):
    client_id: str = Field(min_length=1, max_length=64, pattern=_CLIENT_ID)


class AuthenticateBody(BaseModel):
    challenge_id: str = Field(max_length=_TEXT)
    client_id: str = Field(max_length=64, pattern=_CLIENT_ID)
    # Hex of the 64-byte Ed25519 signature over the nonce.
    signature_hex: str = Field(max_length=_TEXT)


# The guard's answers on every route (a breaker open on a caller is 429), and the job's states.
_ERRORS = errors(404, 409, 429)


def _streamed(media_type: str, description: str) -> dict[int | str, dict[str, Any]]:
    return {200: {"description": description, "content": {media_type: {}}}}


class _CaptureRoutes:
    """The routes' handlers: each admits the caller through `call`, then translates one operation."""

    def __init__(self, desk: OperationsSource) -> None:
        self._desk = desk

    async def call(
        self, request: Request, operation: str, capability: Capability, action: Action[T], subject: str = ""
    ) -> T | JSONResponse:
        try:
            desk = self._desk()
        except KroniiError as error:
            return error_response(error)
        guard = desk.access
        peer = f"http:{request.client.host if request.client else ''}"
        key, identity = caller_key(peer, None), None
        try:
            identity = await guard.identify_or_count(peer, request.headers.get("authorization"))
            key = caller_key(peer, identity)
            guard.admit(key)
            if capability is not Capability.NONE:
                require(identity, capability)
            elif not identity.capabilities & (Capability.REQUEST_CAPTURE | Capability.LIST_META):
                raise PermissionDenied("this client lacks REQUEST_CAPTURE or LIST_META")
            result = await action(desk, identity)
        except KroniiError as error:
            await guard.outcome(key=key, identity=identity, operation=operation, error=error, subject=subject)
            return error_response(error)
        await guard.outcome(key=key, identity=identity, operation=operation, error=None, subject=subject)
        return result

    async def request_capture(self, body: CaptureRequestBody, request: Request) -> Any:
        async def action(desk: CaptureOperations, identity: Identity) -> dict[str, Any]:
            await require_ready()
            accepted = await desk.request_capture(identity, body.command())
            return {"job_id": accepted.job_id, "merged": accepted.merged}

        return await self.call(request, "request", Capability.REQUEST_CAPTURE, action)

    async def get_result(self, job_id: PathId, request: Request) -> Any:
        async def action(desk: CaptureOperations, identity: Identity) -> dict[str, Any]:
            record = await desk.job(job_id)
            include_raw = identity.allows(Capability.READ_RAW_ENCRYPTED)
            return as_json(result_message(record, include_raw_ids=include_raw))

        return await self.call(request, "result", Capability.NONE, action, job_id)

    async def watch(self, job_id: PathId, request: Request) -> Any:
        """One JSON status per line (NDJSON), oldest first, until the job ends."""

        async def action(desk: CaptureOperations, identity: Identity) -> StreamingResponse:
            await desk.job(job_id)  # 404 before the stream starts

            async def lines() -> AsyncIterator[bytes]:
                async for index, record in desk.watch(job_id):
                    yield (json.dumps(as_json(status_message(record, record.history[index]))) + "\n").encode()

            return StreamingResponse(lines(), media_type="application/x-ndjson")

        return await self.call(request, "watch", Capability.NONE, action, job_id)

    async def cancel(self, job_id: PathId, request: Request) -> Any:
        async def action(desk: CaptureOperations, identity: Identity) -> dict[str, Any]:
            return as_json(status_message(await desk.cancel(job_id)))

        return await self.call(request, "cancel", Capability.REQUEST_CAPTURE, action, job_id)

    async def issue_token(self, screenshot_id: PathId, request: Request) -> Any:
        async def action(desk: CaptureOperations, identity: Identity) -> dict[str, Any]:
            token, expires_at = await desk.issue_token(identity, screenshot_id)
            return {
                "screenshot_id": screenshot_id,
                "single_use_token": token,
                "expires_at": expires_at.isoformat(),
            }

        return await self.call(request, "issue_token", Capability.READ_REDACTED, action, screenshot_id)

    async def get_screenshot(
        self, screenshot_id: PathId, request: Request, token: str = Query("", max_length=256)
    ) -> Any:
        async def action(desk: CaptureOperations, identity: Identity) -> Response:
            png, meta = await desk.screenshot(screenshot_id, token)
            return Response(
                png,
                media_type="image/png",
                headers={"X-Redaction-Level": meta.redaction_level, "Cache-Control": "no-store"},
            )

        return await self.call(request, "get_screenshot", Capability.READ_REDACTED, action, screenshot_id)

    async def list_screenshots(self, request: Request, limit: int = Query(0, ge=0, le=500)) -> Any:
        async def action(desk: CaptureOperations, identity: Identity) -> dict[str, Any]:
            found = await desk.list_meta(limit)
            return {"screenshots": [as_json(meta_message(item)) for item in found]}

        return await self.call(request, "list", Capability.LIST_META, action)

    async def raw_encrypted(self, screenshot_id: PathId, request: Request) -> Any:
        async def action(desk: CaptureOperations, identity: Identity) -> Response:
            sealed, version = await desk.raw_encrypted(screenshot_id)
            return Response(
                sealed, media_type="application/octet-stream", headers={"X-Key-Version": str(version)}
            )

        return await self.call(
            request, "get_raw_encrypted", Capability.READ_RAW_ENCRYPTED, action, screenshot_id
        )

    async def challenge(self, body: ChallengeBody, request: Request) -> Any:
        agent_key = f"agent:{body.client_id}"
        try:
            guard = self._desk().access
        except KroniiError as error:
            return error_response(error)
        try:
            guard.admit(agent_key)
            made = await guard.begin_challenge(body.client_id)
        except KroniiError as error:
            await guard.outcome(
                key=agent_key, identity=None, operation="challenge", error=error, subject=body.client_id
            )
            return error_response(error)
        await guard.outcome(
            key=agent_key, identity=None, operation="challenge", error=None, subject=body.client_id
        )
        return {
            "challenge_id": made.challenge_id,
            "nonce_hex": made.nonce.hex(),
            "expires_at": made.expires_at.isoformat(),
        }

    async def authenticate(self, body: AuthenticateBody, request: Request) -> Any:
        agent_key = f"agent:{body.client_id}"
        try:
            guard = self._desk().access
        except KroniiError as error:
            return error_response(error)
        try:
            guard.admit(agent_key)
            try:
                signature = bytes.fromhex(body.signature_hex)
            except ValueError:
                raise InvalidArgument("signature_hex is not hexadecimal", field="signature_hex") from None
            session = await guard.authenticate(body.challenge_id, body.client_id, signature)
        except KroniiError as error:
            await guard.outcome(
                key=agent_key, identity=None, operation="authenticate", error=error, subject=body.client_id
            )
            return error_response(error)
        identity = Identity.agent(session.client_id, session.capabilities)
        await guard.outcome(
            key=agent_key, identity=identity, operation="authenticate", error=None, subject=body.client_id
        )
        return {
            "session_token": session.token,
            "expires_at": session.expires_at.isoformat(),
            "capabilities": names(identity.capabilities),
        }


def capture_router(desk: OperationsSource) -> APIRouter:
    routes = _CaptureRoutes(desk)
    router = APIRouter(tags=["capture"], responses=_ERRORS)
    add = router.add_api_route
    add("/v1/capture/requests", routes.request_capture, methods=["POST"], response_model=None)
    add("/v1/capture/jobs/{job_id}", routes.get_result, methods=["GET"], response_model=None)
    add(
        "/v1/capture/jobs/{job_id}/watch",
        routes.watch,
        methods=["GET"],
        response_model=None,
        responses=_streamed("application/x-ndjson", "one JSON status per line until the job ends"),
    )
    add("/v1/capture/jobs/{job_id}/cancel", routes.cancel, methods=["POST"], response_model=None)
    add(
        "/v1/capture/screenshots/{screenshot_id}/token",
        routes.issue_token,
        methods=["POST"],
        response_model=None,
    )
    add(
        "/v1/screenshots/{screenshot_id}",
        routes.get_screenshot,
        methods=["GET"],
        response_model=None,
        responses=_streamed("image/png", "the redacted screenshot"),
    )
    add("/v1/capture/screenshots", routes.list_screenshots, methods=["GET"], response_model=None)
    add(
        "/v1/capture/screenshots/{screenshot_id}/raw-encrypted",
        routes.raw_encrypted,
        methods=["GET"],
        response_model=None,
        responses=_streamed("application/octet-stream", "the sealed original"),
    )
    add("/v1/capture/challenge", routes.challenge, methods=["POST"], response_model=None)
    add(
        "/v1/capture/authenticate",
        routes.authenticate,
        methods=["POST"],
        response_model=None,
        responses=errors(401),
    )
    return router
