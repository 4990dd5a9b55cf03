"""The vision engine's screenshot source against the real capture service (a process on a private Xvfb
with openbox, on the run's NATS, Redis and PostgreSQL, fed by the capture tests' stand-in sensor):
vision signs in with its own Ed25519 key, asks for the window in front (STRICT) and reads the
redacted PNG back; whatever goes wrong is a sentence that says what to do.

The capture service, its display, database and sensor are the capture tests' own fixtures."""

from __future__ import annotations

import hashlib
import io
import os
import re
import shlex
import socket
import stat
import statistics
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import pytest_asyncio
from cryptography.hazmat.primitives import serialization
from kronii.launcher.cli.agent_clients import load_public_key
from kronii.vision.adapters.capture_frames import CaptureScreenshots, ensure_key, load_private_key
from kronii.vision.ports import ScreenshotUnavailable
from PIL import Image, ImageStat

from tests.desktop import focus_window
from tests.infra import InfraUrls
from tests.integration.capture import conftest as capture_fixtures
from tests.integration.capture.capture_support import CaptureProc, FakeSensor, PlantedWindow, planted_window
from tests.integration.capture.test_capture_agents import clients

# The capture tests' fixtures, reused as they are: pytest takes a module's fixtures from its names.
x_display = capture_fixtures.x_display
capture_database = capture_fixtures.capture_database
capture_service = capture_fixtures.capture_service
sensor = capture_fixtures.sensor

WINDOW_TEXT = "vision reads this window\nnothing secret here"


def window_rectangle(display: str, window_id: int) -> tuple[int, int, int, int]:
    """The window's rectangle on the screen as xwininfo (not python-xlib) reports it."""
    shown = subprocess.run(
        ["xwininfo", "-id", str(window_id)],
        env={**os.environ, "DISPLAY": display},
        capture_output=True,
        text=True,
        timeout=10,
        check=True,
    ).stdout
    field = {
        name: int(re.search(rf"{name}:\s+(-?\d+)", shown).group(1))  # type: ignore[union-attr]
        for name in ("Absolute upper-left X", "Absolute upper-left Y", "Width", "Height")
    }
    return (
        field["Absolute upper-left X"],
        field["Absolute upper-left Y"],
        field["Width"],
        field["Height"],
    )


@pytest_asyncio.fixture
async def window_in_front(
    x_display: str,
    sensor: FakeSensor,
) -> AsyncIterator[PlantedWindow]:
    """An xterm in front, for X and for the stand-in sensor alike."""
    with planted_window(x_display, WINDOW_TEXT, geometry="60x10+100+120") as window:
        focus_window(x_display, window.window_id)
        await sensor.focus(window)
        yield window
        # Before the xterm ends: the sensor's next focus event describes this one as the previous.
        await sensor.focus(None)


@pytest.fixture(scope="module")
def vision_key(
    capture_service: CaptureProc,
    tmp_path_factory: pytest.TempPathFactory,
) -> Path:
    """vision's key pair, made as the service makes it at start."""
    key = tmp_path_factory.mktemp("vision-home") / "keys" / "vision.key"
    ensure_key(key)
    return key


@pytest_asyncio.fixture(scope="module")
async def registered(
    vision_key: Path,
    infra: InfraUrls,
    capture_database: str,
) -> Path:
    """vision's key, registered with capture as a person would (its default capabilities)."""
    added = await clients(
        infra, capture_database, "add", "vision", "--public-key", str(vision_key.with_suffix(".pub"))
    )
    assert added.returncode == 0, added.stderr
    return vision_key


@pytest_asyncio.fixture
async def screenshots(
    capture_service: CaptureProc,
    registered: Path,
    x_display: str,
) -> AsyncIterator[CaptureScreenshots]:
    source = CaptureScreenshots(capture_service.socket, registered, display=x_display)
    try:
        yield source
    finally:
        await source.close()


def test_ensure_key_makes_an_owner_only_private_key_and_the_openssh_public_key_once(tmp_path: Path) -> None:
    key = tmp_path / "state" / "vision.key"
    public = ensure_key(key)
    assert public == tmp_path / "state" / "vision.pub"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    assert public.read_bytes().startswith(b"ssh-ed25519 ")
    private = load_private_key(key)
    raw = private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    # The parser `kronii capture clients add --public-key` uses reads the very key vision signs with.
    assert load_public_key(public.read_bytes()) == raw
    before = key.read_bytes()
    public.unlink()
    assert ensure_key(key) == public
    assert key.read_bytes() == before  # kept: a new key would undo the registration
    assert load_public_key(public.read_bytes()) == raw


async def test_focused_window_is_the_redacted_png_of_the_window_in_front_where_it_lies(
    screenshots: CaptureScreenshots,
    window_in_front: PlantedWindow,
    x_display: str,
) -> None:
    frame = await screenshots.focused_window()

    assert frame.screenshot_id
    assert frame.sha256 == hashlib.sha256(frame.png).hexdigest()
    image = Image.open(io.BytesIO(frame.png))
    assert image.format == "PNG"
    assert image.size == frame.size
    expected = window_rectangle(x_display, window_in_front.window_id)
    assert frame.area == expected
    assert frame.size == expected[2:]  # capture does not scale: one PNG pixel per X pixel
    # The xterm's white page, not some other part of the screen (the desktop behind is black).
    brightness = ImageStat.Stat(image.convert("L")).mean[0]
    assert brightness > 200, brightness


async def test_focused_window_takes_a_new_frame_each_time_and_its_time_is_reported(
    screenshots: CaptureScreenshots,
    window_in_front: PlantedWindow,
) -> None:
    took: list[float] = []
    ids: set[str] = set()
    for _ in range(5):
        started = time.perf_counter()
        frame = await screenshots.focused_window()
        took.append((time.perf_counter() - started) * 1000)
        ids.add(frame.screenshot_id)
    assert len(ids) == 5
    p50 = statistics.median(took)
    print(f"\nfocused_window over 5 calls: p50 {p50:.0f} ms, each {[round(t) for t in took]} ms")
    assert p50 < 8_000


def access_count(capture: CaptureProc, operation: str, result: str) -> float:
    """capture's count of `operation` calls that ended `result` (its /metrics)."""
    wanted = f'kronii_capture_access_total{{operation="{operation}",result="{result}"}}'
    metrics = httpx.get(f"{capture.http}/metrics", timeout=10).text
    return sum(float(line.split()[-1]) for line in metrics.splitlines() if line.startswith(wanted))


async def test_a_session_capture_has_ended_is_replaced_by_signing_in_again(
    screenshots: CaptureScreenshots,
    capture_service: CaptureProc,
    infra: InfraUrls,
    capture_database: str,
    window_in_front: PlantedWindow,
) -> None:
    await screenshots.focused_window()
    signed_in = access_count(capture_service, "authenticate", "ok")
    refused = access_count(capture_service, "issue_token", "permission_denied")
    # Registering the key again ends the agent's sessions: vision's token is dead from here on.
    again = await clients(
        infra, capture_database, "add", "vision", "--public-key", str(screenshots.public_key_path)
    )
    assert again.returncode == 0, again.stderr

    frame = await screenshots.focused_window()

    assert frame.sha256 == hashlib.sha256(frame.png).hexdigest()
    # The dead token was refused once (as a local caller without a person), then vision signed in anew.
    assert access_count(capture_service, "issue_token", "permission_denied") == refused + 1
    assert access_count(capture_service, "authenticate", "ok") == signed_in + 1


async def test_a_registration_without_request_capture_is_told_to_register_again(
    capture_service: CaptureProc,
    infra: InfraUrls,
    capture_database: str,
    x_display: str,
    tmp_path: Path,
) -> None:
    key = tmp_path / "keys" / "reader.key"
    public = ensure_key(key)
    added = await clients(
        infra,
        capture_database,
        "add",
        "vision-reader",
        "--public-key",
        str(public),
        "--capability",
        "read_redacted",
    )
    assert added.returncode == 0, added.stderr
    source = CaptureScreenshots(capture_service.socket, key, client_id="vision-reader", display=x_display)
    try:
        with pytest.raises(ScreenshotUnavailable) as unavailable:
            await source.focused_window()
    finally:
        await source.close()
    sentence = str(unavailable.value)
    assert "without REQUEST_CAPTURE" in sentence, sentence
    assert f"`kronii capture clients add vision-reader --public-key {public}`" in sentence, sentence


async def test_a_job_that_ends_without_an_image_is_capture_s_reason(
    capture_service: CaptureProc,
    registered: Path,
    sensor: FakeSensor,
    window_in_front: PlantedWindow,
    x_display: str,
) -> None:
    # The sensor says nothing has the focus: a STRICT job waits for the window, then expires.
    await sensor.focus(None)
    source = CaptureScreenshots(capture_service.socket, registered, display=x_display, ttl_ms=1_000)
    try:
        with pytest.raises(ScreenshotUnavailable) as unavailable:
            await source.focused_window()
    finally:
        await source.close()
    sentence = str(unavailable.value)
    assert "ended expired" in sentence, sentence
    assert "capture gave no reason" not in sentence, sentence


async def test_an_unregistered_key_is_told_the_exact_command_that_lets_it_in(
    capture_service: CaptureProc,
    infra: InfraUrls,
    capture_database: str,
    window_in_front: PlantedWindow,
    x_display: str,
    tmp_path: Path,
) -> None:
    key = tmp_path / "keys" / "newcomer.key"
    public = ensure_key(key)
    source = CaptureScreenshots(capture_service.socket, key, client_id="vision-newcomer", display=x_display)
    try:
        with pytest.raises(ScreenshotUnavailable) as unavailable:
            await source.focused_window()
        sentence = str(unavailable.value)
        command = f"kronii capture clients add vision-newcomer --public-key {public}"
        assert f"`{command}`" in sentence, sentence

        # Running what the sentence says is all it takes.
        program, *arguments = shlex.split(command)
        assert (program, *arguments[:2]) == ("kronii", "capture", "clients")
        added = await clients(infra, capture_database, *arguments[2:])
        assert added.returncode == 0, added.stderr
        frame = await source.focused_window()
        assert frame.sha256 == hashlib.sha256(frame.png).hexdigest()
    finally:
        await source.close()


async def test_without_capture_the_sentence_says_to_start_it_with_kronii_up(
    vision_key: Path,
    x_display: str,
    tmp_path: Path,
) -> None:
    absent = tmp_path / "run" / "capture.sock"
    source = CaptureScreenshots(absent, vision_key, display=x_display)
    with pytest.raises(ScreenshotUnavailable) as no_socket:
        await source.focused_window()
    assert "`kronii up`" in str(no_socket.value) and str(absent) in str(no_socket.value)

    # A capture that died leaves its socket behind with nobody listening on it.
    absent.parent.mkdir()
    left_behind = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    left_behind.bind(str(absent))
    left_behind.close()
    try:
        with pytest.raises(ScreenshotUnavailable) as stopped:
            await source.focused_window()
    finally:
        await source.close()
    assert "`kronii up`" in str(stopped.value), str(stopped.value)
