"""The sensor and capture paths end to end on a real GNOME (gnome-shell 43 headless with PipeWire and
kronii's Shell extension, tests/gnome.py), both services as processes on real NATS, Redis and
PostgreSQL, nothing standing in: the sensor follows the focus through the extension and keeps its
snapshot; a capture request for the focused window, as an agent makes it from that snapshot, goes to
PERSISTED, and the stored screenshot is that foot window alone, its secrets masked."""

from __future__ import annotations

import io
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from kronii.capture.core.capabilities import Capability
from kronii.capture.v1 import capture_pb2 as pb
from kronii.capture.v1 import capture_pb2_grpc as pb_grpc
from PIL import Image

from tests.gnome import GnomeSession, start_gnome_for_capture
from tests.infra import InfraUrls
from tests.integration.capture.capture_support import (
    PLANTED_TEXT,
    PLANTS,
    agent_bearer,
    capture_env,
    start_capture,
)
from tests.mesh import start_service
from tests.unit.redaction_pixels.pixels_support import read_back, squeeze
from tests.wayland import foot_showing

APP = "planted-notes"  # not "kronii-...": the sensor takes kronii's own windows for its prompts
SESSION_VARIABLES = ("WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", "XDG_CURRENT_DESKTOP")


@pytest.fixture(scope="module")
def gnome() -> Iterator[GnomeSession]:
    with start_gnome_for_capture() as session:
        yield session


def _in_session(env: dict[str, str], gnome: GnomeSession) -> dict[str, str]:
    session = gnome.env()
    env.update({name: session[name] for name in SESSION_VARIABLES})
    env.pop("DISPLAY", None)
    return env


@pytest.fixture(scope="module")
def sensor_url(
    infra: InfraUrls, migrated_database: str, gnome: GnomeSession, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    env = _in_session({**gnome.env(), **infra.env()}, gnome)
    env.pop("KRONII_SENSOR_DISPLAY", None)
    env.update(
        KRONII_DATABASE_URL=migrated_database,
        KRONII_DATA_DIR=str(tmp_path_factory.mktemp("sensor-gnome")),
        KRONII_SENSOR_TICK_INTERVAL_SECS="0.2",
        DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
    )
    with start_service("sensor", env, stop="kill") as sensor:
        yield sensor.url


def test_the_window_the_sensor_saw_focused_on_gnome_is_captured_and_stored_redacted(
    infra: InfraUrls,
    capture_database: str,
    gnome: GnomeSession,
    sensor_url: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    text: Path = tmp_path_factory.mktemp("gnome-e2e") / "planted.txt"
    text.write_text(PLANTED_TEXT)
    foot = gnome.open(foot_showing(text, APP).argv)
    focus = _sensor_focus(sensor_url, APP)
    assert focus["pid"] == foot.pid and focus["window_id"], focus

    env = _in_session(
        capture_env(infra, capture_database, tmp_path_factory.mktemp("capture-gnome-e2e"), None), gnome
    )
    with start_capture(env) as capture:
        display = httpx.get(f"{capture.http}/readyz", timeout=10).json()["dependencies"]["display"]
        assert display["ready"] is True and "mutter's screen cast" in display["detail"], display
        request = pb.CaptureRequest(
            process_id=int(focus["pid"]), window_id=int(focus["window_id"]), app_name=str(focus["app_name"]),
            bypass=pb.STRICT, requester="it.gnome.e2e",
        )  # fmt: skip
        with grpc.insecure_channel(capture.unix_target) as channel:
            stub = pb_grpc.ScreenCaptureStub(channel)
            job = stub.RequestScreenCapture(request, timeout=10)
            result = _finished(stub, job)
            assert result.status == pb.PERSISTED, result
            assert result.meta.window_id == int(focus["window_id"]) and result.meta.frames_captured == 3
            image = _redacted(stub, result.primary_screenshot_id, capture, infra, capture_database)
    assert image.width < 1280 and image.height < 800  # the window, not the monitor
    read = read_back(image)
    assert "deployment" in read  # the foot window really is in the image
    for plant in PLANTS:
        assert squeeze(plant.value) not in squeeze(read)


def _sensor_focus(url: str, app: str) -> dict[str, Any]:
    """The sensor's snapshot's focus once it names `app` (the extension's window, as the sensor keeps it)."""
    deadline = time.monotonic() + 20
    focus: dict[str, Any] = {}
    snapshot: dict[str, Any] = {}
    while time.monotonic() < deadline:
        snapshot = httpx.get(f"{url}/v1/snapshot", timeout=5).json()
        focus = snapshot.get("focus") or {}
        if app in (focus.get("app_name"), focus.get("wm_class")):
            return focus
        time.sleep(0.2)
    ready = httpx.get(f"{url}/readyz", timeout=5).json()
    raise AssertionError(f"the sensor never saw {app} focused; last snapshot {snapshot}; readyz {ready}")


def _finished(stub: pb_grpc.ScreenCaptureStub, job: pb.CaptureJobId) -> pb.CaptureResult:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        result: pb.CaptureResult = stub.GetCaptureResult(job, timeout=10)
        if result.status not in (pb.QUEUED, pb.WAITING, pb.CAPTURING, pb.SCORING, pb.REDACTING):
            return result
        time.sleep(0.2)
    raise AssertionError("the capture did not finish within 60 s")


def _redacted(
    stub: pb_grpc.ScreenCaptureStub, screenshot_id: str, capture: object, infra: InfraUrls, database: str
) -> Image.Image:
    import asyncio

    target = capture.unix_target  # type: ignore[attr-defined]
    reader = asyncio.run(agent_bearer(target, infra.redis, database, Capability.READ_REDACTED))
    token = stub.IssueToken(pb.IssueTokenRequest(screenshot_id=screenshot_id), metadata=reader, timeout=10)
    request = pb.GetScreenshotRequest(screenshot_id=screenshot_id, single_use_token=token.single_use_token)
    data = b"".join(chunk.data for chunk in stub.GetScreenshot(request, metadata=reader, timeout=30))
    return Image.open(io.BytesIO(data))
