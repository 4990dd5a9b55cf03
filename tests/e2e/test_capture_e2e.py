"""The capture service with the real sensor on a real desktop (Xvfb + openbox, xterms, xdotool):
an xterm shows planted secrets; a Strict request over gRPC waits until the window manager focuses
that window, streams queued -> ... -> persisted, and the single-use token yields a PNG in which
Tesseract finds none of the planted values (and the token fails the second time). A window that
never gains focus expires; FocusNext captures the next app that gains focus. The reader is a
registered agent (READ_REDACTED); a person's reads need a terminal (test_capture_presence.py)."""

from __future__ import annotations

import asyncio
import io
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest
import pytest_asyncio
from kronii.capture.core.capabilities import Capability
from kronii.capture.v1 import capture_pb2 as pb
from kronii.capture.v1 import capture_pb2_grpc as pb_grpc
from PIL import Image

from tests.desktop import focus_window
from tests.infra import InfraUrls, create_database
from tests.integration.capture.capture_support import (
    PLANTS,
    CaptureProc,
    Metadata,
    agent_bearer,
    capture_env,
    path_like,
    planted_window,
    start_capture,
)
from tests.mesh import Proc, start_service
from tests.unit.redaction_pixels.pixels_support import read_back, squeeze

pytestmark = pytest.mark.e2e

PROGRESSION = [pb.QUEUED, pb.WAITING, pb.CAPTURING, pb.SCORING, pb.REDACTING, pb.PERSISTED]


@pytest.fixture(scope="module")
def desktop_mesh(
    infra: InfraUrls, xdisplay: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Proc, CaptureProc, str]]:
    from kronii.stores.db import migrate_up

    database = create_database(infra.database, "kronii_capture_e2e")
    migrate_up(database)
    data_dir: Path = tmp_path_factory.mktemp("capture-e2e")
    sensor_env = capture_env(infra, database, data_dir, None)
    sensor_env.update(
        DISPLAY=xdisplay,
        KRONII_SENSOR_TICK_INTERVAL_SECS="0.2",
        DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
    )
    with start_service("sensor", sensor_env, timeout=60) as sensor:
        env = capture_env(infra, database, data_dir, xdisplay)
        with start_capture(env) as capture:
            yield sensor.proc, capture, database


@pytest_asyncio.fixture
async def stub(desktop_mesh: tuple[Proc, CaptureProc, str]) -> AsyncIterator[pb_grpc.ScreenCaptureStub]:
    async with grpc.aio.insecure_channel(desktop_mesh[1].unix_target) as channel:
        yield pb_grpc.ScreenCaptureStub(channel)


async def _statuses(
    stub: pb_grpc.ScreenCaptureStub, job: pb.CaptureJobId, timeout: float = 90
) -> list[pb.CaptureStatus]:
    return [status async for status in stub.WatchCapture(job, timeout=timeout)]


async def _png(stub: pb_grpc.ScreenCaptureStub, screenshot_id: str, token: str, reader: Metadata) -> bytes:
    request = pb.GetScreenshotRequest(screenshot_id=screenshot_id, single_use_token=token)
    return b"".join([chunk.data async for chunk in stub.GetScreenshot(request, metadata=reader, timeout=30)])


async def test_a_strict_request_captures_the_focused_terminal_without_its_secrets(
    stub: pb_grpc.ScreenCaptureStub,
    xdisplay: str,
    desktop_mesh: tuple[Proc, CaptureProc, str],
    infra: InfraUrls,
) -> None:
    reader = await agent_bearer(
        desktop_mesh[1].unix_target, infra.redis, desktop_mesh[2], Capability.READ_REDACTED
    )
    with (
        planted_window(xdisplay) as secrets_window,
        planted_window(xdisplay, "plain notes\nstaging pipeline", geometry="40x5+600+450") as other,
    ):
        focus_window(xdisplay, other.window_id)
        await asyncio.sleep(0.5)
        job = await stub.RequestScreenCapture(
            pb.CaptureRequest(
                process_id=secrets_window.pid,
                window_id=secrets_window.window_id,
                bypass=pb.STRICT,
                requester="e2e",
            ),
            timeout=10,
        )
        watch = asyncio.create_task(_statuses(stub, job))
        await asyncio.sleep(1.0)
        assert not watch.done()  # the other window has the focus: the job waits
        focus_window(xdisplay, secrets_window.window_id)
        seen = await watch
        assert [status.status for status in seen] == PROGRESSION, seen
        screenshot_id = seen[-1].primary_screenshot_id

        token = await stub.IssueToken(
            pb.IssueTokenRequest(screenshot_id=screenshot_id), metadata=reader, timeout=10
        )
        image = Image.open(io.BytesIO(await _png(stub, screenshot_id, token.single_use_token, reader)))
        text = read_back(image)
        assert "deployment" in text
        for plant in PLANTS:
            assert squeeze(plant.value) not in squeeze(text)
        with pytest.raises(grpc.aio.AioRpcError) as second:
            await _png(stub, screenshot_id, token.single_use_token, reader)
        assert second.value.code() == grpc.StatusCode.PERMISSION_DENIED

        # Never focused: the other window stays in the background until the TTL ends the job.
        waiting = await stub.RequestScreenCapture(
            pb.CaptureRequest(
                process_id=other.pid, window_id=other.window_id, ttl_ms=1500, requester="e2e.ttl"
            ),
            timeout=10,
        )
        ended = await _statuses(stub, waiting)
        assert ended[-1].status == pb.EXPIRED and "1500 ms" in ended[-1].reason

        # FocusNext: whatever gains focus next, here the other app. The focus is settled first, so
        # that no event of an earlier switch still in flight counts as "the next one".
        focus_window(xdisplay, secrets_window.window_id)
        await asyncio.sleep(1.5)
        following = await stub.RequestScreenCapture(
            pb.CaptureRequest(bypass=pb.FOCUS_NEXT, requester="e2e.next"), timeout=10
        )
        await asyncio.sleep(0.5)
        focus_window(xdisplay, other.window_id)
        done = await _statuses(stub, following)
        assert done[-1].status == pb.PERSISTED, done
        result = await stub.GetCaptureResult(following, timeout=10)
        assert result.meta.window_id == other.window_id and result.meta.pid == other.pid

    responses = [str(status) for status in seen + ended + done] + [str(result)]
    assert [leak for text in responses for leak in path_like(text)] == []
    assert [leak for leak in path_like(desktop_mesh[1].proc.output)] == []
    assert os.stat(desktop_mesh[1].socket).st_mode & 0o777 == 0o600
