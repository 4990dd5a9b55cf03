"""The ScreenCapture plugin: CaptureRequests to the capture service over its Unix socket (the
pipeline runs as the same user, so the socket's peer-uid check admits it without a session).

The socket is found the capture service's way: its configured directory, else
$XDG_RUNTIME_DIR/kronii, else <data_dir>/run."""

from __future__ import annotations

from pathlib import Path

import grpc
from kronii.capture.v1 import capture_pb2 as cpb
from kronii.capture.v1 import capture_pb2_grpc as cpb_grpc
from kronii.pipeline.core.answers import CaptureOutcome
from kronii.pipeline.core.plugins import Capabilities, PluginRegistration
from kronii.pipeline.core.router import BaseSnapshot, Capability, PluginInfo
from kronii.pipeline.core.states import CaptureStatus, Priority
from kronii.runtime.rendezvous import capture_socket_path

__all__ = ["SCREENCAPTURE_APP_ID", "CaptureClient", "capture_registration", "capture_socket"]

SCREENCAPTURE_APP_ID = "screencapture"

_STATUS = {
    cpb.QUEUED: CaptureStatus.QUEUED,
    cpb.WAITING: CaptureStatus.WAITING,
    cpb.CAPTURING: CaptureStatus.CAPTURING,
    cpb.SCORING: CaptureStatus.SCORING,
    cpb.REDACTING: CaptureStatus.REDACTING,
    cpb.PERSISTED: CaptureStatus.PERSISTED,
    cpb.EXPIRED: CaptureStatus.EXPIRED,
    cpb.REJECTED: CaptureStatus.REJECTED,
    cpb.FAILED: CaptureStatus.FAILED,
    # A cancelled job ended without a screenshot: for the round it is a failure like any other.
    cpb.CANCELLED: CaptureStatus.FAILED,
}
_TERMINAL = frozenset({cpb.PERSISTED, cpb.EXPIRED, cpb.REJECTED, cpb.FAILED, cpb.CANCELLED})


def capture_socket(data_dir: Path, socket_dir: Path | None) -> Path:
    return capture_socket_path(data_dir, socket_dir)


def capture_registration(risk_score: float) -> PluginRegistration:
    return PluginRegistration(
        app_id=SCREENCAPTURE_APP_ID,
        display_name="Screen capture",
        capabilities=Capabilities(snapshot=True),
        risk_score=risk_score,
        version="1",
    )


def capture_plugin_info(risk_score: float) -> PluginInfo:
    return PluginInfo(SCREENCAPTURE_APP_ID, True, True, frozenset({Capability.SNAPSHOT}), risk_score)


class CaptureClient:
    """`CapturePort` over gRPC: request, wait for the terminal status (WatchCapture), cancel."""

    def __init__(self, socket: Path, *, requester: str = "kronii", rpc_timeout_secs: float = 5.0) -> None:
        self._target = f"unix:{socket}"
        self._socket = socket
        self._requester = requester
        self._timeout = rpc_timeout_secs
        self._channel: grpc.aio.Channel | None = None

    @property
    def available(self) -> bool:
        return self._socket.exists()

    def _stub(self) -> cpb_grpc.ScreenCaptureStub:
        if self._channel is None:
            self._channel = grpc.aio.insecure_channel(self._target)
        return cpb_grpc.ScreenCaptureStub(self._channel)

    async def close(self) -> None:
        if self._channel is not None:
            await self._channel.close()
            self._channel = None

    async def request(self, base: BaseSnapshot, priority: Priority, ttl_ms: int) -> str:
        request = cpb.CaptureRequest(
            process_id=base.pid,
            app_name=base.app,
            app_start_time=base.app_start_time_ms,
            window_id=base.window_id,
            # The same window of the same process; a restarted app is a different screen.
            bypass=cpb.WINDOW_RELAXED if base.pid else cpb.FOCUS_NEXT,
            priority=cpb.HIGH if priority is Priority.HIGH else cpb.NORMAL,
            ttl_ms=ttl_ms,
            requester=self._requester,
        )
        job = await self._stub().RequestScreenCapture(request, timeout=self._timeout)
        return str(job.job_id)

    async def outcome(self, job_id: str) -> CaptureOutcome:
        last: cpb.CaptureStatus | None = None
        async for status in self._stub().WatchCapture(cpb.CaptureJobId(job_id=job_id)):
            last = status
            if status.status in _TERMINAL:
                break
        if last is None or last.status not in _TERMINAL:
            return CaptureOutcome(CaptureStatus.FAILED, reason="the capture stream ended without a result")
        return CaptureOutcome(_STATUS[last.status], last.primary_screenshot_id, last.reason)

    async def cancel(self, job_id: str) -> None:
        await self._stub().CancelCapture(cpb.CaptureJobId(job_id=job_id), timeout=self._timeout)
