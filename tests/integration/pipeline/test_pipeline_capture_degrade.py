"""A capture the capture service rejects degrades the round to the other context (seed row 9).
The capture service here is a stand-in over the same gRPC proto on a Unix socket, answering
REJECTED: the real service is exercised in tests/e2e/test_pipeline_e2e.py (persisted path)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest
from kronii.capture.v1 import capture_pb2 as cpb
from kronii.capture.v1 import capture_pb2_grpc as cpb_grpc

from tests.infra import InfraUrls
from tests.integration.pipeline.pipeline_support import pipeline_database, pipeline_env, start_pipeline


class _RejectingCapture(cpb_grpc.ScreenCaptureServicer):
    def __init__(self) -> None:
        self.requests: list[cpb.CaptureRequest] = []

    async def RequestScreenCapture(self, request: cpb.CaptureRequest, context: object) -> cpb.CaptureJobId:
        self.requests.append(request)
        return cpb.CaptureJobId(job_id=f"job{len(self.requests)}")

    async def WatchCapture(
        self, request: cpb.CaptureJobId, context: object
    ) -> AsyncIterator[cpb.CaptureStatus]:
        yield cpb.CaptureStatus(job_id=request.job_id, status=cpb.QUEUED)
        await asyncio.sleep(0.2)
        yield cpb.CaptureStatus(job_id=request.job_id, status=cpb.REJECTED, reason="excessive redaction")


@pytest.fixture
def rejecting_capture(tmp_path: Path) -> Iterator[tuple[Path, _RejectingCapture]]:
    socket_dir = tmp_path / "sock"
    socket_dir.mkdir(mode=0o700)
    servicer = _RejectingCapture()  # type: ignore[abstract]  # the other RPCs answer UNIMPLEMENTED
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    server_box: list[grpc.aio.Server] = []

    async def serve() -> None:
        server = grpc.aio.server()
        cpb_grpc.add_ScreenCaptureServicer_to_server(servicer, server)
        server.add_insecure_port(f"unix:{socket_dir / 'capture.sock'}")
        await server.start()
        server_box.append(server)
        ready.set()
        await server.wait_for_termination()

    thread = threading.Thread(target=lambda: loop.run_until_complete(serve()), daemon=True)
    thread.start()
    assert ready.wait(10)
    try:
        yield socket_dir, servicer
    finally:
        stopping = asyncio.run_coroutine_threadsafe(server_box[0].stop(None), loop)
        with contextlib.suppress(TimeoutError):  # the daemon thread goes with the test run
            stopping.result(2)
        thread.join(5)


def test_a_rejected_capture_degrades_the_round_and_it_goes_on(
    infra: InfraUrls, tmp_path: Path, rejecting_capture: tuple[Path, _RejectingCapture]
) -> None:
    socket_dir, servicer = rejecting_capture
    env = pipeline_env(
        infra,
        pipeline_database(infra, "degrade"),
        tmp_path,
        KRONII_PIPELINE_CAPTURE_ENABLED="true",
        KRONII_PIPELINE_CAPTURE_SOCKET_DIR=str(socket_dir),
    )
    with start_pipeline(env) as pipeline:
        response = pipeline.trigger(
            kind="focus_changed",
            source="test",
            app_id="code",
            high_priority=True,
            attributes={"wm_class": "Code", "title": "Visual Studio Code", "window_id": "55"},
        )
        assert response.status_code == 202
        run = pipeline.wait_for_run(lambda r: True, 20)
        notes = pipeline.get("/v1/state")["recent_notes"][run["run_id"]]
    path = [v["state"] for v in run["states"]]
    assert path[:5] == ["idle", "collecting", "routing", "awaiting_capture", "redacting"], path
    assert path[-1] == "cooling" and "extracting" in path
    assert "capture rejected: degraded to the other context" in notes
    assert run["notes"] == notes, "the runs API keeps the same notes as /v1/state"
    assert (
        servicer.requests
        and servicer.requests[0].window_id == 55
        and servicer.requests[0].requester == "kronii"
    )
