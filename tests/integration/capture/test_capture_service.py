"""The capture service as a process under Xvfb, on real NATS, Redis and PostgreSQL, with a stand-in
sensor: the status progression, single-use tokens, merging, expiry, cancellation, FocusNext,
errors that name the field, no raw bytes without READ_RAW_ENCRYPTED, no paths in any response.
Local calls (this process, through the Unix socket, no terminal) request and follow captures; the
reads are an agent's, registered with READ_REDACTED and LIST_META (a person's reads are in
test_capture_presence.py)."""

from __future__ import annotations

import asyncio
import io
import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc
import httpx
import pytest
import pytest_asyncio
from kronii.capture.core.capabilities import Capability
from kronii.capture.v1 import capture_pb2 as pb
from kronii.capture.v1 import capture_pb2_grpc as pb_grpc
from kronii.stores import subjects
from kronii.stores.bus import Bus
from PIL import Image

from tests.infra import InfraUrls
from tests.integration.capture.capture_support import (
    CaptureProc,
    FakeSensor,
    Metadata,
    PlantedWindow,
    agent_bearer,
    path_like,
    planted_window,
)
from tests.unit.redaction_pixels.pixels_support import PLANTS, read_back, squeeze

PROGRESSION = [pb.QUEUED, pb.WAITING, pb.CAPTURING, pb.SCORING, pb.REDACTING, pb.PERSISTED]


@pytest_asyncio.fixture
async def stub(capture_service: CaptureProc) -> AsyncIterator[pb_grpc.ScreenCaptureStub]:
    async with grpc.aio.insecure_channel(capture_service.unix_target) as channel:
        yield pb_grpc.ScreenCaptureStub(channel)


@pytest_asyncio.fixture(scope="module")
async def reader(capture_service: CaptureProc, infra: InfraUrls, capture_database: str) -> Metadata:
    """The session metadata of an agent that may read screenshots and list them."""
    return await agent_bearer(
        capture_service.unix_target,
        infra.redis,
        capture_database,
        Capability.READ_REDACTED | Capability.LIST_META,
    )


@pytest.fixture(scope="module")
def terminal(x_display: str) -> Iterator[PlantedWindow]:
    with planted_window(x_display) as window:
        yield window


def strict(window: PlantedWindow, **extra: Any) -> pb.CaptureRequest:
    request = pb.CaptureRequest(
        process_id=window.pid, window_id=window.window_id, app_name=window.wm_class, bypass=pb.STRICT
    )
    for name, value in extra.items():
        setattr(request, name, value)
    return request


async def statuses(
    stub: pb_grpc.ScreenCaptureStub, job_id: str, timeout: float = 60
) -> list[pb.CaptureStatus]:
    return [status async for status in stub.WatchCapture(pb.CaptureJobId(job_id=job_id), timeout=timeout)]


async def test_strict_request_goes_queued_to_persisted_and_the_token_reads_a_redacted_png_once(
    stub: pb_grpc.ScreenCaptureStub,
    sensor: FakeSensor,
    terminal: PlantedWindow,
    infra: InfraUrls,
    reader: Metadata,
) -> None:
    bus = Bus("test-listener")
    await bus.connect(infra.nats)
    published: list[int] = []

    async def on_status(subject: str, message: pb.CaptureStatus) -> None:
        published.append(message.status)

    await bus.subscribe(subjects.CAPTURE_STATUS, on_status)
    try:
        await sensor.focus(None)
        job = await stub.RequestScreenCapture(strict(terminal, requester="it.strict"), timeout=10)
        watch = asyncio.create_task(statuses(stub, job.job_id))
        await asyncio.sleep(0.3)
        await sensor.focus(terminal)
        seen = await watch
        assert [status.status for status in seen] == PROGRESSION, seen
        persisted = seen[-1]
        assert persisted.primary_screenshot_id
        await asyncio.sleep(0.2)
        assert [code for code in published if code in PROGRESSION][-5:] == PROGRESSION[1:]
    finally:
        await bus.close()

    result = await stub.GetCaptureResult(job, timeout=10)
    assert result.status == pb.PERSISTED
    assert result.meta.frames_captured == 3
    assert result.meta.window_id == terminal.window_id and result.meta.pid == terminal.pid
    assert result.meta.redaction_level == "amber"
    assert list(result.screenshot_ids) == []  # raw ids are for READ_RAW_ENCRYPTED holders only

    token = await stub.IssueToken(
        pb.IssueTokenRequest(screenshot_id=persisted.primary_screenshot_id), metadata=reader, timeout=10
    )
    chunks = [
        chunk
        async for chunk in stub.GetScreenshot(
            pb.GetScreenshotRequest(
                screenshot_id=persisted.primary_screenshot_id, single_use_token=token.single_use_token
            ),
            metadata=reader,
            timeout=30,
        )
    ]
    assert chunks[0].content_type == "image/png" and chunks[0].redaction_level == "amber"
    image = Image.open(io.BytesIO(b"".join(chunk.data for chunk in chunks)))
    assert image.format == "PNG" and image.size == (chunks[0].width, chunks[0].height)
    readable = squeeze(read_back(image))
    assert "deployment" in read_back(image)  # the window really is in the image
    for plant in PLANTS:
        assert squeeze(plant.value) not in readable

    with pytest.raises(grpc.aio.AioRpcError) as again:
        async for _ in stub.GetScreenshot(
            pb.GetScreenshotRequest(
                screenshot_id=persisted.primary_screenshot_id, single_use_token=token.single_use_token
            ),
            metadata=reader,
            timeout=10,
        ):
            pass
    assert again.value.code() == grpc.StatusCode.PERMISSION_DENIED


async def test_an_out_of_range_burst_count_is_invalid_argument_naming_the_field(
    stub: pb_grpc.ScreenCaptureStub, terminal: PlantedWindow
) -> None:
    for request, field in (
        (strict(terminal, burst_count=5), "burst_count"),
        (strict(terminal, burst_interval_ms=100), "burst_interval_ms"),
        (strict(terminal, ttl_ms=500), "ttl_ms"),
        (pb.CaptureRequest(bypass=pb.STRICT, window_id=terminal.window_id), "process_id"),
        (strict(terminal, requester="no spaces"), "requester"),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.RequestScreenCapture(request, timeout=10)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert field in (refused.value.details() or "")


async def test_a_window_that_never_gains_focus_expires_with_a_reason(
    stub: pb_grpc.ScreenCaptureStub, sensor: FakeSensor, terminal: PlantedWindow
) -> None:
    await sensor.focus(None)
    job = await stub.RequestScreenCapture(strict(terminal, ttl_ms=1000, requester="it.expire"), timeout=10)
    seen = await statuses(stub, job.job_id, timeout=20)
    assert [status.status for status in seen] == [pb.QUEUED, pb.WAITING, pb.EXPIRED]
    assert "1000 ms" in seen[-1].reason


async def test_requests_for_the_same_target_within_the_window_merge_and_cancel_ends_them(
    stub: pb_grpc.ScreenCaptureStub, sensor: FakeSensor, terminal: PlantedWindow
) -> None:
    await sensor.focus(None)
    first = await stub.RequestScreenCapture(strict(terminal, requester="it.merge"), timeout=10)
    second = await stub.RequestScreenCapture(strict(terminal, requester="it.merge"), timeout=10)
    other = await stub.RequestScreenCapture(strict(terminal, requester="it.other"), timeout=10)
    assert first.job_id == second.job_id
    assert other.job_id != first.job_id
    for job in (first, other):
        cancelled = await stub.CancelCapture(job, timeout=10)
        assert cancelled.status == pb.CANCELLED
    result = await stub.GetCaptureResult(first, timeout=10)
    assert result.status == pb.CANCELLED and result.meta.reason == "cancelled by the caller"
    assert [entry.status for entry in result.history] == [pb.QUEUED, pb.WAITING, pb.CANCELLED] or [
        entry.status for entry in result.history
    ] == [pb.QUEUED, pb.CANCELLED]


async def test_focus_next_captures_whatever_window_gains_focus_next(
    stub: pb_grpc.ScreenCaptureStub, sensor: FakeSensor, terminal: PlantedWindow, x_display: str
) -> None:
    await sensor.focus(terminal)
    await asyncio.sleep(0.3)
    with planted_window(x_display, "nothing secret here\nstaging pipeline", geometry="40x5+700+500") as other:
        job = await stub.RequestScreenCapture(
            pb.CaptureRequest(bypass=pb.FOCUS_NEXT, requester="it.next"), timeout=10
        )
        await asyncio.sleep(0.5)
        still = await stub.GetCaptureResult(job, timeout=10)
        assert still.status == pb.WAITING  # the focus has not switched since the request
        await sensor.focus(other)
        seen = await statuses(stub, job.job_id)
        assert seen[-1].status == pb.PERSISTED, seen
        result = await stub.GetCaptureResult(job, timeout=10)
    assert result.meta.window_id == other.window_id
    assert result.meta.redaction_level == "green"


async def test_without_read_raw_encrypted_no_call_returns_raw_bytes(
    stub: pb_grpc.ScreenCaptureStub, capture_service: CaptureProc, reader: Metadata
) -> None:
    listing = await stub.ListScreenshots(pb.ListScreenshotsRequest(limit=50), metadata=reader, timeout=10)
    assert listing.screenshots and {item.kind for item in listing.screenshots} == {"redacted"}
    for metadata in (reader, ()):  # the agent, and a local process
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            async for _ in stub.GetRawEncrypted(
                pb.GetRawEncryptedRequest(screenshot_id=listing.screenshots[0].screenshot_id),
                metadata=metadata,
                timeout=10,
            ):
                pass
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED


async def test_a_local_process_without_a_person_may_follow_its_jobs_but_not_read_screenshots(
    stub: pb_grpc.ScreenCaptureStub, reader: Metadata
) -> None:
    listing = await stub.ListScreenshots(pb.ListScreenshotsRequest(limit=1), metadata=reader, timeout=10)
    shot = listing.screenshots[0]
    result = await stub.GetCaptureResult(pb.CaptureJobId(job_id=shot.job_id), timeout=10)
    assert result.primary_screenshot_id == shot.screenshot_id  # its job's status: allowed
    for call in (
        stub.ListScreenshots(pb.ListScreenshotsRequest(limit=1), timeout=10),
        stub.IssueToken(pb.IssueTokenRequest(screenshot_id=shot.screenshot_id), timeout=10),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await call
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert (refused.value.details() or "").startswith("reading screenshots needs a person at a terminal")


async def test_calls_over_tcp_need_a_session_and_repeated_failures_trip_the_breaker(
    capture_service: CaptureProc,
) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{capture_service.grpc_port}") as channel:
        tcp = pb_grpc.ScreenCaptureStub(channel)
        codes = []
        for _ in range(7):
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await tcp.ListScreenshots(pb.ListScreenshotsRequest(), timeout=10)
            codes.append(refused.value.code())
    assert codes[0] == grpc.StatusCode.UNAUTHENTICATED
    assert codes[-1] == grpc.StatusCode.RESOURCE_EXHAUSTED
    response = httpx.get(f"{capture_service.http}/v1/capture/screenshots", timeout=10)
    assert response.status_code == 401 and "session" in response.json()["detail"]
    metrics = httpx.get(f"{capture_service.http}/metrics", timeout=10).text
    opened = [line for line in metrics.splitlines() if line.startswith("kronii_capture_breaker_opened_total")]
    assert opened and float(opened[0].split()[-1]) >= 1


async def test_no_response_log_line_or_metric_contains_a_filesystem_path(
    stub: pb_grpc.ScreenCaptureStub, capture_service: CaptureProc, reader: Metadata
) -> None:
    listing = await stub.ListScreenshots(pb.ListScreenshotsRequest(limit=50), metadata=reader, timeout=10)
    texts = [str(listing)]
    for item in listing.screenshots:
        result = await stub.GetCaptureResult(pb.CaptureJobId(job_id=item.job_id), timeout=10)
        texts.append(str(result))
    texts.append(httpx.get(f"{capture_service.http}/readyz", timeout=10).text)
    texts.append(httpx.get(f"{capture_service.http}/metrics", timeout=10).text)
    texts.append(capture_service.proc.output)
    leaks = [leak for text in texts for leak in path_like(text)]
    assert leaks == []
    assert str(capture_service.socket) not in "".join(texts)
    assert os.stat(capture_service.socket).st_mode & 0o777 == 0o600
