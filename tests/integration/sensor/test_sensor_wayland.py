"""The sensor as a process in a real Wayland session (a headless sway with foot and GTK4 windows), against
real NATS, Redis and PostgreSQL: focus switches made by sway are FocusChanged events on the bus and the
snapshot names the focused app id; /readyz names the compositor; and an X display beside it (XWayland's
place in a real session) is not mistaken for the session."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import nats
import pytest
from kronii.activity.v1 import activity_pb2 as apb
from nats.aio.msg import Msg

from tests.desktop import open_window, start_xvfb
from tests.infra import InfraUrls
from tests.mesh import start_service, wait_until
from tests.wayland import CLIENTS, Sway, start_sway

FOOT, GTK4 = CLIENTS[0], CLIENTS[2]


class FocusEvents:
    """kronii.activity.focus_changed as it arrives, on a thread with its own loop."""

    def __init__(self, url: str) -> None:
        self.seen: list[apb.FocusChanged] = []
        self._url = url
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)
        self._thread.start()
        assert self._ready.wait(10), "no NATS subscription"

    async def _run(self) -> None:
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        client = await nats.connect(self._url)

        async def on_message(message: Msg) -> None:
            event = apb.FocusChanged()
            event.ParseFromString(message.data)
            self.seen.append(event)

        await client.subscribe("kronii.activity.focus_changed", cb=on_message)
        await client.flush()
        self._ready.set()
        await self._stop.wait()
        await client.close()

    def apps(self) -> list[str]:
        return [event.current.app_name for event in self.seen]

    def close(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(5)


def _env(infra: InfraUrls, database: str, data: Path, sway: Sway, x_display: str | None) -> dict[str, str]:
    env = sway.env()
    env.update(infra.env())
    env.pop("KRONII_SENSOR_DISPLAY", None)
    if x_display is not None:
        env["DISPLAY"] = x_display
    env.update(
        KRONII_DATABASE_URL=database,
        KRONII_DATA_DIR=str(data),
        KRONII_SENSOR_TICK_INTERVAL_SECS="0.2",
        DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
        DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
    )
    return env


@pytest.fixture(scope="module")
def sway() -> Iterator[Sway]:
    with start_sway() as session:
        session.open(FOOT)
        session.open(GTK4)
        yield session


@pytest.fixture(scope="module")
def x_display() -> Iterator[str]:
    """An X display with a focused xterm of its own: what a sensor that followed DISPLAY would report."""
    with start_xvfb() as display, open_window(display, "xwayland decoy", "KroniiXDecoy"):
        yield display


@pytest.fixture(scope="module")
def sensor_url(
    infra: InfraUrls,
    migrated_database: str,
    sway: Sway,
    x_display: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[str]:
    env = _env(infra, migrated_database, tmp_path_factory.mktemp("sensor"), sway, x_display)
    with start_service("sensor", env, stop="kill") as sensor:
        yield sensor.url


def test_sway_focus_switches_are_focus_changed_events_and_the_snapshot_names_the_app_id(
    infra: InfraUrls, sway: Sway, sensor_url: str
) -> None:
    events = FocusEvents(infra.nats)
    try:
        for client in (FOOT, GTK4, FOOT):
            sway.focus(client.app_id)
            wait_until(
                lambda app=client.app_id: bool(events.apps()) and events.apps()[-1] == app,  # type: ignore[misc]
                10,
                f"FocusChanged to {client.app_id}",
            )
            snapshot = httpx.get(f"{sensor_url}/v1/snapshot", timeout=5).json()
            assert snapshot["focus"]["app_name"] == client.app_id
            assert snapshot["display_available"] is True
            window = next(item for item in sway.windows() if item["app_id"] == client.app_id)
            assert snapshot["focus"]["pid"] == window["pid"]  # from sway's IPC: the window list has no pid
    finally:
        events.close()
    assert events.seen[-1].previous.app_name == GTK4.app_id
    assert events.seen[-1].change == "app"


def test_readyz_names_the_compositor_and_says_nothing_is_missing(sensor_url: str) -> None:
    display = httpx.get(f"{sensor_url}/readyz", timeout=5).json()["dependencies"]["display"]
    assert display["ready"] is True
    assert display["detail"].startswith("Wayland (sway)")


def test_the_x_display_beside_the_session_is_not_followed(sway: Sway, sensor_url: str) -> None:
    sway.focus(GTK4.app_id)
    time.sleep(0.5)
    snapshot = httpx.get(f"{sensor_url}/v1/snapshot", timeout=5).json()
    assert snapshot["focus"]["app_name"] == GTK4.app_id
    assert "KroniiXDecoy" not in str(snapshot)
    assert os.environ.get("WAYLAND_DISPLAY") is None  # the suite's own environment stays X11's
