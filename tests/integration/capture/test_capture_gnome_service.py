"""The capture service as a process on a real GNOME (gnome-shell 43 headless with PipeWire, tests/gnome.py),
on real NATS, Redis and PostgreSQL: /readyz names mutter's screen cast as its display, and a request for
the focused foot window, named as the sensor names it on GNOME (mutter's window id from kronii's Shell
extension), goes to PERSISTED; the stored screenshot is that window alone, redacted."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator

import grpc
import httpx
import pytest
import pytest_asyncio
from kronii.capture.core.capabilities import Capability
from kronii.capture.v1 import capture_pb2 as pb
from kronii.capture.v1 import capture_pb2_grpc as pb_grpc

from tests.gnome import GnomeSession, start_gnome_for_capture
from tests.infra import InfraUrls
from tests.integration.capture.capture_support import (
    PLANTED_TEXT,
    PLANTS,
    CaptureProc,
    FakeSensor,
    PlantedWindow,
    agent_bearer,
    capture_env,
    start_capture,
    strict_capture,
)
from tests.integration.sensor_adapters.test_gnome_focus_extension import wait_for
from tests.unit.redaction_pixels.pixels_support import read_back, squeeze
from tests.wayland import foot_showing

APP = "kronii-capture-gnome"


@pytest.fixture(scope="module")
def gnome() -> Iterator[GnomeSession]:
    with start_gnome_for_capture() as session:
        yield session


@pytest.fixture(scope="module")
def gnome_capture(
    infra: InfraUrls, capture_database: str, gnome: GnomeSession, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[CaptureProc]:
    env = capture_env(infra, capture_database, tmp_path_factory.mktemp("capture-gnome"), None)
    session = gnome.env()
    for name in ("WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", "XDG_CURRENT_DESKTOP"):
        env[name] = session[name]
    with start_capture(env) as service:
        yield service


@pytest.fixture(scope="module")
def foot(gnome: GnomeSession, tmp_path_factory: pytest.TempPathFactory) -> PlantedWindow:
    """A foot window showing the planted text, named by mutter's window id as the sensor names it."""
    text = tmp_path_factory.mktemp("gnome-planted") / "planted.txt"
    text.write_text(PLANTED_TEXT)
    client = foot_showing(text, APP)
    process = gnome.open(client.argv)
    fields = ""

    def focused() -> bool:
        nonlocal fields
        fields = gnome.focus_fields()
        return f"'{APP}'" in fields

    wait_for(focused)
    window_id = re.search(r"uint64 (\d+)", fields)
    assert window_id, fields
    return PlantedWindow("wayland", process, int(window_id.group(1)), APP)


@pytest_asyncio.fixture
async def stub(gnome_capture: CaptureProc) -> AsyncIterator[pb_grpc.ScreenCaptureStub]:
    async with grpc.aio.insecure_channel(gnome_capture.unix_target) as channel:
        yield pb_grpc.ScreenCaptureStub(channel)


async def test_on_gnome_a_request_for_the_focused_foot_window_is_persisted_redacted(
    stub: pb_grpc.ScreenCaptureStub,
    gnome_capture: CaptureProc,
    sensor: FakeSensor,
    foot: PlantedWindow,
    infra: InfraUrls,
    capture_database: str,
) -> None:
    display = httpx.get(f"{gnome_capture.http}/readyz", timeout=10).json()["dependencies"]["display"]
    assert display["ready"] is True and "mutter's screen cast" in display["detail"], display
    reader = await agent_bearer(
        gnome_capture.unix_target,
        infra.redis,
        capture_database,
        Capability.READ_REDACTED | Capability.LIST_META,
    )
    result, image = await strict_capture(stub, reader, sensor, foot, "it.gnome")
    assert result.status == pb.PERSISTED and result.meta.frames_captured == 3
    assert result.meta.window_id == foot.window_id
    assert image.width < 1280 and image.height < 800  # the window, not the monitor
    read = read_back(image)
    assert "deployment" in read  # the foot window really is in the image
    for plant in PLANTS:
        assert squeeze(plant.value) not in squeeze(read)
