"""The console's capture adapter (adapters/capture_api.py) against the REAL capture service as a
process (real Redis, PostgreSQL, Xvfb, a real window captured): the day's listing through capture's
person routes, a thumbnail that is exactly the REDACTED frame scaled down, a full frame through the
Unix socket refused without the person's proof of presence (capture's own sentence), usage and
retention, and a delete of the day that removes the sealed files and the rows."""

from __future__ import annotations

import io
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import psycopg
import pytest
import pytest_asyncio
from kronii.capture.core.capabilities import Capability
from kronii.capture.v1 import capture_pb2 as pb
from kronii.capture.v1 import capture_pb2_grpc as pb_grpc
from kronii.console.adapters.capture_api import CaptureApi
from kronii.console.adapters.service_clients import HttpServiceClients
from kronii.foundation.errors import PermissionDenied
from kronii.foundation.urls import libpq_url
from PIL import Image, ImageChops

from tests.desktop import start_xvfb
from tests.infra import InfraUrls, create_database
from tests.integration.capture.capture_support import (
    CaptureProc,
    FakeSensor,
    PlantedWindow,
    agent_bearer,
    capture_env,
    planted_window,
    start_capture,
)

DAY = 86_400


@pytest.fixture(scope="module")
def console_x_display() -> Iterator[str]:
    with start_xvfb(screen="1280x800x24") as display:
        yield display


@pytest.fixture(scope="module")
def console_capture_database(infra: InfraUrls) -> str:
    from kronii.stores.db import migrate_up

    url = create_database(infra.database, "kronii_console_capture_it")
    migrate_up(url)
    return url


@pytest.fixture(scope="module")
def capture_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("console-capture")


@pytest.fixture(scope="module")
def capture_service(
    infra: InfraUrls, console_capture_database: str, console_x_display: str, capture_data: Path
) -> Iterator[CaptureProc]:
    with start_capture(
        capture_env(infra, console_capture_database, capture_data, console_x_display)
    ) as service:
        yield service


@pytest_asyncio.fixture(scope="module")
async def fake_sensor(infra: InfraUrls) -> AsyncIterator[FakeSensor]:
    sensor = FakeSensor(infra)
    await sensor.start()
    try:
        yield sensor
    finally:
        await sensor.close()


@pytest.fixture(scope="module")
def window(console_x_display: str) -> Iterator[PlantedWindow]:
    with planted_window(console_x_display) as planted:
        yield planted


@pytest_asyncio.fixture(scope="module")
async def stored(
    capture_service: CaptureProc, fake_sensor: FakeSensor, window: PlantedWindow, infra: InfraUrls,
    console_capture_database: str,
) -> tuple[str, bytes]:  # fmt: skip
    """One persisted screenshot of the real window, and its redacted PNG as an agent reads it."""
    bearer = await agent_bearer(
        capture_service.unix_target, infra.redis, console_capture_database,
        Capability.REQUEST_CAPTURE | Capability.READ_REDACTED,
    )  # fmt: skip
    await fake_sensor.focus(window)
    async with grpc.aio.insecure_channel(capture_service.unix_target) as channel:
        stub = pb_grpc.ScreenCaptureStub(channel)
        job = await stub.RequestScreenCapture(
            pb.CaptureRequest(process_id=window.pid, window_id=window.window_id, bypass=pb.STRICT, requester="it.console"),
            metadata=bearer, timeout=10,
        )  # fmt: skip
        seen = [status async for status in stub.WatchCapture(job, metadata=bearer, timeout=60)]
        assert seen[-1].status == pb.PERSISTED, seen
        screenshot_id = str(seen[-1].primary_screenshot_id)
        token = await stub.IssueToken(
            pb.IssueTokenRequest(screenshot_id=screenshot_id), metadata=bearer, timeout=10
        )
        request = pb.GetScreenshotRequest(
            screenshot_id=screenshot_id, single_use_token=token.single_use_token
        )
        png = b"".join(
            [chunk.data async for chunk in stub.GetScreenshot(request, metadata=bearer, timeout=10)]
        )
    return screenshot_id, png


@pytest_asyncio.fixture
async def capture_api(capture_service: CaptureProc) -> AsyncIterator[CaptureApi]:
    clients = HttpServiceClients({"capture": capture_service.http}, api_token=None, timeout_secs=10)
    try:
        yield CaptureApi(clients, socket=capture_service.socket)
    finally:
        await clients.close()


async def test_the_day_lists_the_real_frame_and_its_thumbnail_is_the_redacted_frame_scaled_down(
    capture_api: CaptureApi, stored: tuple[str, bytes]
) -> None:
    screenshot_id, redacted_png = stored
    now = time.time()

    frames = await capture_api.frames(now - DAY, now + 60)
    thumb = await capture_api.thumbnail(screenshot_id)

    assert [frame.screenshot_id for frame in frames] == [screenshot_id]
    assert frames[0].redaction_level in ("green", "amber", "red")
    with Image.open(io.BytesIO(redacted_png)) as full, Image.open(io.BytesIO(thumb)) as small:
        expected = full.convert("RGB")
        expected.thumbnail((320, 320))
        assert small.size == expected.size and max(small.size) <= 320
        assert ImageChops.difference(small.convert("RGB"), expected).getbbox() is None


async def test_a_full_frame_without_presence_is_refused_with_captures_sentence(
    capture_api: CaptureApi, stored: tuple[str, bytes]
) -> None:
    with pytest.raises(PermissionDenied, match="needs a person at a terminal"):
        await capture_api.open_frame(stored[0])


async def test_usage_counts_the_frame_and_says_the_retention(
    capture_api: CaptureApi, stored: tuple[str, bytes]
) -> None:
    usage = await capture_api.usage()

    assert usage.redacted_objects >= 1 and usage.redacted_bytes > 0
    assert (usage.raw_days, usage.redacted_days) == (1, 7)


async def test_deleting_the_day_removes_the_sealed_files_and_the_rows(
    capture_api: CaptureApi, stored: tuple[str, bytes], capture_data: Path, console_capture_database: str
) -> None:
    vault = capture_data / "capture" / "objects"
    assert any(vault.iterdir())
    now = time.time()

    done = await capture_api.forget_between(now - DAY, now + 60)

    assert done.deleted >= 1 and done.files_removed == done.deleted and done.files_kept == 0
    assert list(vault.iterdir()) == []
    with psycopg.connect(libpq_url(console_capture_database)) as connection:
        rows = connection.execute("SELECT count(*) FROM capture_objects").fetchone()
        audited = connection.execute(
            "SELECT count(*) FROM audit_log WHERE action = 'capture.delete' AND detail->>'scope' = 'range'"
        ).fetchone()
    assert rows == (0,) and audited == (1,)
    assert await capture_api.frames(now - DAY, now + 60) == []
