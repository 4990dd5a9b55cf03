"""HTTP: the gRPC operations as JSON under /v1/capture/..., plus GET /v1/screenshots/{id}?token=...
(image/png). Every call but the agent handshake needs `authorization: Bearer <session token>`.
Errors are 4xx/5xx with {"detail": sentence} (and "field" for a bad request field)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from kronii.capture.adapters.sessions import AuthError, Identity
from kronii.capture.api.convert import meta_message, result_message, status_message
from kronii.capture.api.guard import Guard
from kronii.capture.app import CaptureApp, spec_fields
from kronii.capture.core.capabilities import Capability, names
from kronii.common.api_edge import as_json, error_response
from kronii.common.errors import InvalidArgument, KroniiError, PermissionDenied, Unauthenticated
from kronii.common.limits import PathId
from kronii.common.openapi import errors
from pydantic import BaseModel, Field

__all__ = ["capture_router"]

T = TypeVar("T")


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


def capture_router(app: CaptureApp) -> APIRouter:
    router = APIRouter(tags=["capture"], responses=_ERRORS)
    guard = Guard(app)

    async def call(
        request: Request,
        operation: str,
        capability: Capability,
        action: Callable[[Identity], Awaitable[T]],
        subject: str = "",
    ) -> T | JSONResponse:
        peer = f"http:{request.client.host if request.client else ''}"
        key, identity = Guard.caller_key(peer, None), None
        try:
            identity = await guard.identify_or_count(peer, request.headers.get("authorization"))
            key = Guard.caller_key(peer, identity)
            guard.admit(key)
            if capability is not Capability.NONE:
                Guard.require(identity, capability)
            elif not identity.capabilities & (Capability.REQUEST_CAPTURE | Capability.LIST_META):
                raise PermissionDenied("this client lacks REQUEST_CAPTURE or LIST_META")
            result = await action(identity)
        except KroniiError as error:
            await guard.outcome(key=key, identity=identity, operation=operation, error=error, subject=subject)
            return error_response(error)
        await guard.outcome(key=key, identity=identity, operation=operation, error=None, subject=subject)
        return result

    @router.post("/v1/capture/requests", response_model=None)
    async def request_capture(body: CaptureRequestBody, request: Request) -> Any:
        async def action(identity: Identity) -> dict[str, Any]:
            job_id, merged = await app.request_capture(
                identity,
                spec_fields(
                    process_id=body.process_id,
                    app_name=body.app_name,
                    app_start_time_ms=body.app_start_time,
                    window_id=body.window_id,
                    bypass=body.bypass,
                    burst_count=body.burst_count,
                    burst_interval_ms=body.burst_interval_ms,
                    priority=body.priority,
                    ttl_ms=body.ttl_ms,
                    requester=body.requester,
                ),
            )
            return {"job_id": job_id, "merged": merged}

        return await call(request, "request", Capability.REQUEST_CAPTURE, action)

    @router.get("/v1/capture/jobs/{job_id}", response_model=None)
    async def get_result(job_id: PathId, request: Request) -> Any:
        async def action(identity: Identity) -> dict[str, Any]:
            record = await app.job(job_id)
            include_raw = identity.allows(Capability.READ_RAW_ENCRYPTED)
            return as_json(result_message(record, include_raw_ids=include_raw))

        return await call(request, "result", Capability.NONE, action, job_id)

    @router.get(
        "/v1/capture/jobs/{job_id}/watch",
        response_model=None,
        responses=_streamed("application/x-ndjson", "one JSON status per line until the job ends"),
    )
    async def watch(job_id: PathId, request: Request) -> Any:
        """One JSON status per line (NDJSON), oldest first, until the job ends."""

        async def action(identity: Identity) -> StreamingResponse:
            await app.job(job_id)  # 404 before the stream starts

            async def lines() -> AsyncIterator[bytes]:
                async for index, record in app.watch(job_id):
                    yield (json.dumps(as_json(status_message(record, record.history[index]))) + "\n").encode()

            return StreamingResponse(lines(), media_type="application/x-ndjson")

        return await call(request, "watch", Capability.NONE, action, job_id)

    @router.post("/v1/capture/jobs/{job_id}/cancel", response_model=None)
    async def cancel(job_id: PathId, request: Request) -> Any:
        async def action(identity: Identity) -> dict[str, Any]:
            return as_json(status_message(await app.cancel(job_id)))

        return await call(request, "cancel", Capability.REQUEST_CAPTURE, action, job_id)

    @router.post("/v1/capture/screenshots/{screenshot_id}/token", response_model=None)
    async def issue_token(screenshot_id: PathId, request: Request) -> Any:
        async def action(identity: Identity) -> dict[str, Any]:
            token, expires_at = await app.issue_token(identity, screenshot_id)
            return {
                "screenshot_id": screenshot_id,
                "single_use_token": token,
                "expires_at": expires_at.isoformat(),
            }

        return await call(request, "issue_token", Capability.READ_REDACTED, action, screenshot_id)

    @router.get(
        "/v1/screenshots/{screenshot_id}",
        response_model=None,
        responses=_streamed("image/png", "the redacted screenshot"),
    )
    async def get_screenshot(
        screenshot_id: PathId, request: Request, token: str = Query("", max_length=256)
    ) -> Any:
        async def action(identity: Identity) -> Response:
            png, meta = await app.screenshot(screenshot_id, token)
            return Response(
                png,
                media_type="image/png",
                headers={"X-Redaction-Level": meta.redaction_level, "Cache-Control": "no-store"},
            )

        return await call(request, "get_screenshot", Capability.READ_REDACTED, action, screenshot_id)

    @router.get("/v1/capture/screenshots", response_model=None)
    async def list_screenshots(request: Request, limit: int = Query(0, ge=0, le=500)) -> Any:
        async def action(identity: Identity) -> dict[str, Any]:
            found = await app.list_meta(limit)
            return {"screenshots": [as_json(meta_message(item)) for item in found]}

        return await call(request, "list", Capability.LIST_META, action)

    @router.get(
        "/v1/capture/screenshots/{screenshot_id}/raw-encrypted",
        response_model=None,
        responses=_streamed("application/octet-stream", "the sealed original"),
    )
    async def raw_encrypted(screenshot_id: PathId, request: Request) -> Any:
        async def action(identity: Identity) -> Response:
            sealed, version = await app.raw_encrypted(screenshot_id)
            return Response(
                sealed, media_type="application/octet-stream", headers={"X-Key-Version": str(version)}
            )

        return await call(request, "get_raw_encrypted", Capability.READ_RAW_ENCRYPTED, action, screenshot_id)

    @router.post("/v1/capture/challenge", response_model=None)
    async def challenge(body: ChallengeBody, request: Request) -> Any:
        agent_key = f"agent:{body.client_id}"
        try:
            guard.admit(agent_key)
            assert app.clients is not None
            try:
                made = await app.clients.begin(body.client_id)
            except (AuthError, ValueError) as error:
                raise InvalidArgument(str(error), field="client_id") from None
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

    @router.post("/v1/capture/authenticate", response_model=None, responses=errors(401))
    async def authenticate(body: AuthenticateBody, request: Request) -> Any:
        agent_key = f"agent:{body.client_id}"
        try:
            guard.admit(agent_key)
            try:
                signature = bytes.fromhex(body.signature_hex)
            except ValueError:
                raise InvalidArgument("signature_hex is not hexadecimal", field="signature_hex") from None
            assert app.clients is not None
            try:
                session = await app.clients.authenticate(body.challenge_id, body.client_id, signature)
            except AuthError as error:
                raise Unauthenticated(error.message) from None
            except ValueError as error:
                raise InvalidArgument(str(error), field="client_id") from None
        except KroniiError as error:
            await guard.outcome(
                key=agent_key, identity=None, operation="authenticate", error=error, subject=body.client_id
            )
            return error_response(error)
        identity = session.identity()
        await guard.outcome(
            key=agent_key, identity=identity, operation="authenticate", error=None, subject=body.client_id
        )
        return {
            "session_token": session.token,
            "expires_at": session.expires_at.isoformat(),
            "capabilities": names(session.capabilities),
        }

    return router
