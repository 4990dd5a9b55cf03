"""The capture service's stored frames for the Captures and Privacy pages (CaptureFrames).

The listing, the thumbnails, usage and deletes go to capture's person routes (/v1/capture/shelf...,
which answer only this user's own processes) through the console's service clients. A full frame is
asked for through capture's Unix socket, as `kronii capture get` asks: a token, then the redacted PNG.
The capture service then wants the person's proof of presence (polkit asking them, or a terminal's
binding, which the console never has); without it, it refuses with a sentence that is raised here as
PermissionDenied for the page to show. Only REDACTED images ever come through this module."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kronii.console.core.captures import Forgotten, Frame, FrameUsage
from kronii.console.deps import ServiceClients
from kronii.console.ports import ServiceNotAnswering
from kronii.foundation.errors import NotFound, PermissionDenied
from kronii.foundation.settings import KroniiSettings
from pydantic_settings import SettingsConfigDict

__all__ = ["CaptureApi", "capture_socket", "frame_of"]

SERVICE = "capture"
SHELF = "/v1/capture/shelf"
THUMBNAIL_SIDE = 320
# A full frame may wait for the person to answer polkit's question.
OPEN_TIMEOUT_SECS = 90.0
GONE = "that frame is gone (deleted, or past its retention)"


class _CaptureSocketSettings(KroniiSettings):
    """Where the capture service puts its Unix socket: its own setting, read the way it reads it."""

    model_config = SettingsConfigDict(env_prefix="KRONII_CAPTURE_", extra="ignore", frozen=True)
    socket_dir: Path | None = None


def capture_socket() -> Path:
    from kronii.foundation.settings import load_settings
    from kronii.runtime.rendezvous import capture_socket_path

    settings = load_settings(_CaptureSocketSettings)
    return capture_socket_path(settings.data_dir, settings.socket_dir)


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


def _epoch(text: Any) -> float:
    return datetime.fromisoformat(str(text).replace("Z", "+00:00")).timestamp()


def frame_of(data: Mapping[str, Any]) -> Frame:
    return Frame(
        screenshot_id=str(data["screenshot_id"]),
        created_at=_epoch(data["created_at"]),
        app=str(data.get("app") or ""),
        width=int(data.get("width", 0)),
        height=int(data.get("height", 0)),
        redaction_level=str(data.get("redaction_level", "")),
        masked_fraction=float(data.get("masked_fraction", 0.0)),
        size_bytes=int(data.get("size_bytes", 0)),
    )


def _forgotten(data: Mapping[str, Any]) -> Forgotten:
    return Forgotten(
        deleted=int(data.get("deleted", 0)),
        files_removed=int(data.get("files_removed", 0)),
        files_missing=int(data.get("files_missing", 0)),
        files_kept=int(data.get("files_kept", 0)),
    )


class CaptureApi:
    def __init__(self, services: ServiceClients, socket: Path | None = None) -> None:
        self._services = services
        self._socket = socket

    async def frames(self, since: float, until: float) -> list[Frame]:
        body = await self._services.get_json(
            SERVICE, SHELF, {"since": _iso(since), "until": _iso(until), "limit": 2000}
        )
        return [frame_of(item) for item in body.get("screenshots", [])]

    async def thumbnail(self, screenshot_id: str) -> bytes:
        try:
            body = await self._services.get_json(
                SERVICE, f"{SHELF}/{screenshot_id}/thumbnail", {"size": THUMBNAIL_SIDE}
            )
        except ServiceNotAnswering as error:
            raise NotFound(GONE) if error.status == 404 else error from None
        try:
            return base64.b64decode(str(body.get("png_base64", "")), validate=True)
        except (binascii.Error, ValueError):
            raise ServiceNotAnswering(SERVICE, "its thumbnail is not base64") from None

    async def usage(self) -> FrameUsage:
        body = await self._services.get_json(SERVICE, f"{SHELF}/usage")
        retention = body.get("retention", {})
        return FrameUsage(
            redacted_objects=int(body["redacted"]["objects"]),
            redacted_bytes=int(body["redacted"]["bytes"]),
            raw_objects=int(body["raw"]["objects"]),
            raw_bytes=int(body["raw"]["bytes"]),
            raw_days=int(retention.get("raw_days", 0)),
            redacted_days=int(retention.get("redacted_days", 0)),
        )

    async def forget_one(self, screenshot_id: str) -> Forgotten:
        try:
            return _forgotten(await self._services.delete_json(SERVICE, f"{SHELF}/{screenshot_id}"))
        except ServiceNotAnswering as error:
            raise NotFound(GONE) if error.status == 404 else error from None

    async def forget_between(self, since: float, until: float) -> Forgotten:
        params = {"since": _iso(since), "until": _iso(until)}
        return _forgotten(await self._services.delete_json(SERVICE, SHELF, params))

    async def forget_all(self) -> Forgotten:
        return _forgotten(await self._services.delete_json(SERVICE, SHELF, {"all": "true"}))

    async def open_frame(self, screenshot_id: str) -> bytes:
        """The redacted PNG through the Unix socket: token, then image, as `kronii capture get`."""
        import grpc
        from kronii.capture.v1 import capture_pb2 as pb
        from kronii.capture.v1 import capture_pb2_grpc as pb_grpc

        socket = self._socket or capture_socket()
        if not socket.exists():
            raise ServiceNotAnswering(SERVICE, "its local socket is not there (is `kronii up` running it?)")
        async with grpc.aio.insecure_channel(f"unix:{socket}") as channel:
            stub = pb_grpc.ScreenCaptureStub(channel)
            try:
                token = await stub.IssueToken(
                    pb.IssueTokenRequest(screenshot_id=screenshot_id), timeout=OPEN_TIMEOUT_SECS
                )
                request = pb.GetScreenshotRequest(
                    screenshot_id=screenshot_id, single_use_token=token.single_use_token
                )
                chunks = [
                    chunk.data async for chunk in stub.GetScreenshot(request, timeout=OPEN_TIMEOUT_SECS)
                ]
            except grpc.aio.AioRpcError as error:
                raise _refusal(error.code().name, error.details() or "") from None
        return b"".join(chunks)


def _refusal(code: str, details: str) -> Exception:
    if code in ("PERMISSION_DENIED", "UNAUTHENTICATED"):
        return PermissionDenied(details or "the capture service refused to open the frame")
    if code == "NOT_FOUND":
        return NotFound(GONE)
    return ServiceNotAnswering(SERVICE, details or code.lower().replace("_", " "))
