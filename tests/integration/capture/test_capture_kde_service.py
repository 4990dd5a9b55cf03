"""The capture service as a process on a real KWin (KDE Plasma 5.27's kwin_wayland headless, tests/kde.py),
on real NATS, Redis and PostgreSQL, after the person's `kronii capture kde allow`: /readyz names KWin's
ScreenShot2 as its display, and a request for the focused featherpad window showing the planted text,
named as the sensor names it on KDE (KWin's internal id through kronii's KWin script), goes to
PERSISTED; the stored screenshot is that window alone, redacted."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import httpx
import pytest
import pytest_asyncio
from kronii.capture.core.capabilities import Capability
from kronii.capture.v1 import capture_pb2 as pb
from kronii.capture.v1 import capture_pb2_grpc as pb_grpc
from kronii.desktop.session import probe
from kronii.sensor.adapters.kwin import KdeDisplay
from kronii.sensor.core.model import Focus

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
from tests.integration.sensor_adapters.test_kde_kwin_script import wait_for
from tests.kde import KWin, start_kwin
from tests.unit.redaction_pixels.pixels_support import read_back, squeeze
from tests.wayland import WaylandClient

KRONII = str(Path(sys.executable).parent / "kronii")


@pytest.fixture(scope="module")
def kwin() -> Iterator[KWin]:
    with start_kwin() as session:
        allowed = subprocess.run(
            [KRONII, "capture", "kde", "allow"], env=session.env(), capture_output=True, text=True, timeout=60
        )
        assert allowed.returncode == 0, allowed.stderr
        time.sleep(2)  # KWin reads the new desktop file within seconds
        yield session


@pytest.fixture(scope="module")
def kde_capture(
    infra: InfraUrls, capture_database: str, kwin: KWin, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[CaptureProc]:
    env = capture_env(infra, capture_database, tmp_path_factory.mktemp("capture-kde"), None)
    session = kwin.env()
    for name in (
        "HOME",
        "WAYLAND_DISPLAY",
        "XDG_RUNTIME_DIR",
        "DBUS_SESSION_BUS_ADDRESS",
        "XDG_CURRENT_DESKTOP",
    ):
        env[name] = session[name]
    with start_capture(env) as service:
        yield service


@pytest.fixture(scope="module")
def editor(kwin: KWin, tmp_path_factory: pytest.TempPathFactory) -> PlantedWindow:
    """featherpad (Qt5 on Wayland) showing the planted text, named by KWin's id as the sensor names it."""
    text = tmp_path_factory.mktemp("kde-planted") / "planted.txt"
    text.write_text(PLANTED_TEXT)
    seen: list[Focus] = []
    display = KdeDisplay(probe(kwin.env()), address=kwin.session_bus)
    display.start(seen.append)
    try:
        process = kwin.open(
            WaylandClient("qt5", ("featherpad", str(text)), "featherpad", (("QT_QPA_PLATFORM", "wayland"),))
        )
        wait_for(lambda: bool(seen) and seen[-1].wm_class.lower() == "featherpad", "featherpad focused")
        time.sleep(1.0)  # drawn
    finally:
        display.close()
    return PlantedWindow("wayland", process, seen[-1].window_id, "featherpad")


@pytest_asyncio.fixture
async def stub(kde_capture: CaptureProc) -> AsyncIterator[pb_grpc.ScreenCaptureStub]:
    async with grpc.aio.insecure_channel(kde_capture.unix_target) as channel:
        yield pb_grpc.ScreenCaptureStub(channel)


async def test_on_kde_a_request_for_the_focused_editor_window_is_persisted_redacted(
    stub: pb_grpc.ScreenCaptureStub,
    kde_capture: CaptureProc,
    sensor: FakeSensor,
    editor: PlantedWindow,
    infra: InfraUrls,
    capture_database: str,
) -> None:
    display = httpx.get(f"{kde_capture.http}/readyz", timeout=10).json()["dependencies"]["display"]
    assert display["ready"] is True and "ScreenShot2" in display["detail"], display
    reader = await agent_bearer(
        kde_capture.unix_target,
        infra.redis,
        capture_database,
        Capability.READ_REDACTED | Capability.LIST_META,
    )
    result, image = await strict_capture(stub, reader, sensor, editor, "it.kde")
    assert result.status == pb.PERSISTED and result.meta.frames_captured == 3
    assert result.meta.window_id == editor.window_id
    assert image.width < 1280 and image.height < 800  # the window, not the screen
    read = read_back(image)
    assert "deployment" in read  # the editor really is in the image
    for plant in PLANTS:
        assert squeeze(plant.value) not in squeeze(read)
