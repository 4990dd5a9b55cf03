"""The capture service as a process in real Wayland sessions, on real NATS, Redis and PostgreSQL:

- on a headless sway it takes its frames through wlr-screencopy: a request for the focused foot window
  (a stand-in sensor names it) goes to PERSISTED, and the stored screenshot is that window, redacted;
- on weston, which offers no screen copy, it is ready, /readyz says why it has no display in the
  session's own sentence (not XWayland's DISPLAY), and capture requests are refused with it;
- on cage, which copies its screen but lists no window, the same: no request could be checked against
  the focused window, so it is refused at once rather than left waiting for a focus that never comes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import httpx
import pytest
import pytest_asyncio
from kronii.capture.core.capabilities import Capability
from kronii.capture.v1 import capture_pb2 as pb
from kronii.capture.v1 import capture_pb2_grpc as pb_grpc

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
from tests.unit.redaction_pixels.pixels_support import read_back, squeeze
from tests.wayland import (
    Sway,
    foot_showing,
    start_sway,
    start_weston,
    wait_until_still,
)

NO_SCREEN_COPY = "weston offers no screen copy (zwlr_screencopy_manager_v1): capture cannot take frames"


@pytest.fixture(scope="module")
def weston_capture(
    infra: InfraUrls, capture_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[CaptureProc]:
    data_dir: Path = tmp_path_factory.mktemp("capture-weston")
    with start_weston() as weston:
        env = capture_env(infra, capture_database, data_dir, None)
        env.update(WAYLAND_DISPLAY=str(weston.socket), DISPLAY=":97")  # an XWayland-like DISPLAY beside it
        with start_capture(env) as service:
            yield service


@pytest.fixture(scope="module")
def sway() -> Iterator[Sway]:
    with start_sway() as session:
        yield session


@pytest.fixture(scope="module")
def sway_capture(
    infra: InfraUrls, capture_database: str, sway: Sway, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[CaptureProc]:
    data_dir: Path = tmp_path_factory.mktemp("capture-sway")
    env = capture_env(infra, capture_database, data_dir, None)
    env.update(WAYLAND_DISPLAY=str(sway.socket), SWAYSOCK=str(sway.ipc))
    with start_capture(env) as service:
        yield service


@pytest_asyncio.fixture
async def stub(sway_capture: CaptureProc) -> AsyncIterator[pb_grpc.ScreenCaptureStub]:
    async with grpc.aio.insecure_channel(sway_capture.unix_target) as channel:
        yield pb_grpc.ScreenCaptureStub(channel)


@pytest.fixture(scope="module")
def foot(sway: Sway, tmp_path_factory: pytest.TempPathFactory) -> PlantedWindow:
    """A foot window showing the planted text, as the sensor would name it: on Wayland its window id is
    the sensor's own handle (here sway's container id), meaningless to the capture service."""
    text = tmp_path_factory.mktemp("wayland-planted") / "planted.txt"
    text.write_text(PLANTED_TEXT)
    window = sway.open(foot_showing(text, "kronii-capture-e2e"))
    wait_until_still(sway, window["rect"])
    return PlantedWindow("wayland", sway.clients[-1], int(window["id"]), "kronii-capture-e2e")


def test_on_weston_readyz_says_the_session_offers_no_screen_copy(weston_capture: CaptureProc) -> None:
    body = httpx.get(f"{weston_capture.http}/readyz", timeout=10).json()
    assert body["ready"] is True
    display = body["dependencies"]["display"]
    assert display["ready"] is False and display["required"] is False
    assert NO_SCREEN_COPY in display["detail"]
    assert ":97" not in display["detail"]


def test_on_weston_a_capture_request_is_refused_with_that_sentence(weston_capture: CaptureProc) -> None:
    with (
        grpc.insecure_channel(weston_capture.unix_target) as channel,
        pytest.raises(grpc.RpcError) as refused,
    ):
        pb_grpc.ScreenCaptureStub(channel).RequestScreenCapture(
            pb.CaptureRequest(bypass=pb.FOCUS_NEXT), timeout=10
        )
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
    assert NO_SCREEN_COPY in (refused.value.details() or "")


async def test_on_sway_a_request_for_the_focused_foot_window_is_persisted_redacted(
    stub: pb_grpc.ScreenCaptureStub,
    sway_capture: CaptureProc,
    sensor: FakeSensor,
    foot: PlantedWindow,
    sway: Sway,
    infra: InfraUrls,
    capture_database: str,
) -> None:
    display = httpx.get(f"{sway_capture.http}/readyz", timeout=10).json()["dependencies"]["display"]
    assert display["ready"] is True and "Wayland (sway)" in display["detail"]
    reader = await agent_bearer(
        sway_capture.unix_target,
        infra.redis,
        capture_database,
        Capability.READ_REDACTED | Capability.LIST_META,
    )
    sway.focus(foot.wm_class)
    rect = next(window["rect"] for window in sway.windows() if window["app_id"] == foot.wm_class)

    result, image = await strict_capture(stub, reader, sensor, foot, "it.wayland")
    assert result.status == pb.PERSISTED and result.meta.frames_captured == 3
    assert image.size == (rect["width"], rect["height"])  # sway's rect of the focused window
    read = read_back(image)
    assert "deployment" in read  # the foot window really is in the image
    for plant in PLANTS:
        assert squeeze(plant.value) not in squeeze(read)
