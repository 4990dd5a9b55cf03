"""gRPC: every rpc of capture.proto's ScreenCapture, behind the guard (usecases.guard_access: identity,
capability, breaker, audit), calling the operations (usecases.operations). Errors carry a sentence:
INVALID_ARGUMENT names the field."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, NoReturn, TypeAlias

from kronii.capture.api.convert import capture_request, meta_message, result_message, status_message
from kronii.capture.core.capabilities import Capability, names
from kronii.capture.core.identity import Identity, caller_key, require
from kronii.capture.usecases.operations import CaptureOperations
from kronii.capture.v1 import capture_pb2 as pb
from kronii.capture.v1 import capture_pb2_grpc as pb_grpc
from kronii.edge.api_edge import abort_with
from kronii.foundation.errors import InvalidArgument, KroniiError, PermissionDenied
from kronii.runtime.readiness import require_ready

__all__ = ["CaptureServicer"]

# grpc ships no type hints here (mypy sees Any); the alias keeps signatures readable.
Context: TypeAlias = Any
CHUNK_BYTES = 64 * 1024


def _metadata(context: Context) -> dict[str, str]:
    """The call's text metadata by lower-case key (binary values are never ours)."""
    return {
        str(key).lower(): value
        for key, value in context.invocation_metadata() or ()
        if isinstance(value, str)
    }


def _authorization(context: Context) -> str:
    return _metadata(context).get("authorization", "")


class CaptureServicer(pb_grpc.ScreenCaptureServicer):
    def __init__(self, desk: CaptureOperations) -> None:
        self._desk = desk
        self._guard = desk.access

    async def _enter(
        self, context: Context, capability: Capability, operation: str, subject: str = ""
    ) -> tuple[str, Identity]:
        """(breaker key, identity). A caller that cannot be identified raises KroniiError; one
        that is refused after that is audited under its identity (pid, exe) and aborted here."""
        peer = context.peer() or ""
        # Identify first: local clients come in from loopback too, and must not share the
        # unauthenticated callers' breaker.
        identity = await self._guard.identify_or_count(peer, _authorization(context))
        key = caller_key(peer, identity)
        try:
            self._guard.admit(key)
            if capability is Capability.NONE:
                # Job status: whoever may request captures, or a reader (a person's window).
                if not identity.capabilities & (Capability.REQUEST_CAPTURE | Capability.LIST_META):
                    identity = await self._guard.authorize(
                        peer, identity, Capability.LIST_META, _metadata(context)
                    )
                if not identity.capabilities & (Capability.REQUEST_CAPTURE | Capability.LIST_META):
                    raise PermissionDenied("this client lacks REQUEST_CAPTURE or LIST_META")
            else:
                identity = await self._guard.authorize(peer, identity, capability, _metadata(context))
                require(identity, capability)
        except KroniiError as error:
            await self._fail(context, operation, key, identity, error, subject)
        return key, identity

    async def _fail(
        self,
        context: Context,
        operation: str,
        key: str,
        identity: Identity | None,
        error: KroniiError,
        subject: str = "",
    ) -> NoReturn:
        await self._guard.outcome(
            key=key, identity=identity, operation=operation, error=error, subject=subject
        )
        await abort_with(context, error)

    # ---- jobs ----------------------------------------------------------------------------------

    async def RequestScreenCapture(self, request: pb.CaptureRequest, context: Context) -> pb.CaptureJobId:
        key, identity = "", None
        try:
            key, identity = await self._enter(context, Capability.REQUEST_CAPTURE, "request")
            assert identity is not None
            await require_ready()
            accepted = await self._desk.request_capture(identity, capture_request(request))
        except KroniiError as error:
            await self._fail(
                context, "request", key or caller_key(context.peer() or "", None), identity, error
            )
        await self._guard.outcome(
            key=key,
            identity=identity,
            operation="request",
            error=None,
            subject=accepted.job_id,
            merged=accepted.merged,
        )
        return pb.CaptureJobId(job_id=accepted.job_id)

    async def _job_access(self, context: Context, operation: str, job_id: str) -> tuple[str, Identity]:
        key, identity = "", None
        try:
            key, identity = await self._enter(context, Capability.NONE, operation, job_id)
        except KroniiError as error:
            await self._fail(
                context,
                operation,
                key or caller_key(context.peer() or "", None),
                identity,
                error,
                job_id,
            )
        return key, identity

    async def WatchCapture(
        self, request: pb.CaptureJobId, context: Context
    ) -> AsyncIterator[pb.CaptureStatus]:
        key, identity = await self._job_access(context, "watch", request.job_id)
        try:
            stream = self._desk.watch(request.job_id)
            first = True
            async for index, record in stream:
                if first:
                    first = False
                    await self._guard.outcome(
                        key=key, identity=identity, operation="watch", error=None, subject=request.job_id
                    )
                yield status_message(record, record.history[index])
        except KroniiError as error:
            await self._fail(context, "watch", key, identity, error, request.job_id)

    async def GetCaptureResult(self, request: pb.CaptureJobId, context: Context) -> pb.CaptureResult:
        key, identity = await self._job_access(context, "result", request.job_id)
        try:
            record = await self._desk.job(request.job_id)
        except KroniiError as error:
            await self._fail(context, "result", key, identity, error, request.job_id)
        await self._guard.outcome(
            key=key, identity=identity, operation="result", error=None, subject=request.job_id
        )
        return result_message(record, include_raw_ids=identity.allows(Capability.READ_RAW_ENCRYPTED))

    async def CancelCapture(self, request: pb.CaptureJobId, context: Context) -> pb.CaptureStatus:
        key, identity = "", None
        try:
            key, identity = await self._enter(context, Capability.REQUEST_CAPTURE, "cancel", request.job_id)
            record = await self._desk.cancel(request.job_id)
        except KroniiError as error:
            await self._fail(
                context,
                "cancel",
                key or caller_key(context.peer() or "", None),
                identity,
                error,
                request.job_id,
            )
        await self._guard.outcome(
            key=key, identity=identity, operation="cancel", error=None, subject=request.job_id
        )
        return status_message(record)

    # ---- screenshots ---------------------------------------------------------------------------

    async def IssueToken(self, request: pb.IssueTokenRequest, context: Context) -> pb.ScreenshotToken:
        key, identity = "", None
        try:
            key, identity = await self._enter(
                context, Capability.READ_REDACTED, "issue_token", request.screenshot_id
            )
            assert identity is not None
            token, expires_at = await self._desk.issue_token(identity, request.screenshot_id)
        except KroniiError as error:
            await self._fail(
                context,
                "issue_token",
                key or caller_key(context.peer() or "", None),
                identity,
                error,
                request.screenshot_id,
            )
        await self._guard.outcome(
            key=key, identity=identity, operation="issue_token", error=None, subject=request.screenshot_id
        )
        message = pb.ScreenshotToken(screenshot_id=request.screenshot_id, single_use_token=token)
        message.expires_at.FromDatetime(expires_at)
        return message

    async def GetScreenshot(
        self, request: pb.GetScreenshotRequest, context: Context
    ) -> AsyncIterator[pb.ScreenshotChunk]:
        key, identity = "", None
        try:
            key, identity = await self._enter(
                context, Capability.READ_REDACTED, "get_screenshot", request.screenshot_id
            )
            png, meta = await self._desk.screenshot(request.screenshot_id, request.single_use_token)
        except KroniiError as error:
            await self._fail(
                context,
                "get_screenshot",
                key or caller_key(context.peer() or "", None),
                identity,
                error,
                request.screenshot_id,
            )
        await self._guard.outcome(
            key=key,
            identity=identity,
            operation="get_screenshot",
            error=None,
            subject=request.screenshot_id,
            redaction_level=meta.redaction_level,
        )
        for offset in range(0, len(png), CHUNK_BYTES):
            chunk = pb.ScreenshotChunk(data=png[offset : offset + CHUNK_BYTES])
            if offset == 0:
                chunk.content_type = "image/png"
                chunk.width, chunk.height = meta.width, meta.height
                chunk.redaction_level = meta.redaction_level
            yield chunk

    async def ListScreenshots(
        self, request: pb.ListScreenshotsRequest, context: Context
    ) -> pb.ListScreenshotsResponse:
        key, identity = "", None
        try:
            key, identity = await self._enter(context, Capability.LIST_META, "list")
            found = await self._desk.list_meta(request.limit)
        except KroniiError as error:
            await self._fail(context, "list", key or caller_key(context.peer() or "", None), identity, error)
        await self._guard.outcome(key=key, identity=identity, operation="list", error=None, count=len(found))
        return pb.ListScreenshotsResponse(screenshots=[meta_message(item) for item in found])

    async def GetRawEncrypted(
        self, request: pb.GetRawEncryptedRequest, context: Context
    ) -> AsyncIterator[pb.RawEncryptedChunk]:
        key, identity = "", None
        try:
            key, identity = await self._enter(
                context, Capability.READ_RAW_ENCRYPTED, "get_raw_encrypted", request.screenshot_id
            )
            sealed, version = await self._desk.raw_encrypted(request.screenshot_id)
        except KroniiError as error:
            await self._fail(
                context,
                "get_raw_encrypted",
                key or caller_key(context.peer() or "", None),
                identity,
                error,
                request.screenshot_id,
            )
        await self._guard.outcome(
            key=key,
            identity=identity,
            operation="get_raw_encrypted",
            error=None,
            subject=request.screenshot_id,
        )
        for offset in range(0, len(sealed), CHUNK_BYTES):
            yield pb.RawEncryptedChunk(data=sealed[offset : offset + CHUNK_BYTES], key_version=version)

    # ---- agent handshake -----------------------------------------------------------------------

    async def BeginChallenge(self, request: pb.ChallengeRequest, context: Context) -> pb.Challenge:
        key = f"agent:{request.client_id}"
        try:
            self._guard.admit(key)
            challenge = await self._guard.begin_challenge(request.client_id)
        except KroniiError as error:
            await self._fail(context, "challenge", key, None, error)
        message = pb.Challenge(challenge_id=challenge.challenge_id, nonce=challenge.nonce)
        message.expires_at.FromDatetime(challenge.expires_at)
        return message

    async def Authenticate(self, request: pb.AuthenticateRequest, context: Context) -> pb.Session:
        key = f"agent:{request.client_id}"
        try:
            self._guard.admit(key)
            session = await self._guard.authenticate(
                request.challenge_id, request.client_id, bytes(request.signature)
            )
        except KroniiError as error:
            # A malformed client id is audited without it as the subject.
            subject = "" if isinstance(error, InvalidArgument) else request.client_id
            await self._fail(context, "authenticate", key, None, error, subject)
        identity = Identity.agent(session.client_id, session.capabilities)
        await self._guard.outcome(
            key=identity.actor,
            identity=identity,
            operation="authenticate",
            error=None,
            subject=request.client_id,
        )
        message = pb.Session(session_token=session.token, capabilities=names(identity.capabilities))
        message.expires_at.FromDatetime(session.expires_at)
        return message
