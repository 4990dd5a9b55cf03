"""The sensor as a process on a real KWin (KDE Plasma 5.27, headless, tests/kde.py), against real NATS,
Redis and PostgreSQL: windows of two toolkits taking the focus are FocusChanged events on the bus through
kronii's KWin script, the snapshot names the focused app id and pid, /readyz names KDE, and `kronii
doctor` says how the sensor follows the focus there."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.infra import InfraUrls
from tests.integration.sensor.test_sensor_wayland import FocusEvents
from tests.kde import KWin, start_kwin
from tests.mesh import start_service, wait_until
from tests.wayland import CLIENTS

GTK4, QT5 = CLIENTS[2], CLIENTS[3]


@pytest.fixture(scope="module")
def kwin() -> Iterator[KWin]:
    with start_kwin() as session:
        yield session


@pytest.fixture(scope="module")
def sensor_url(
    infra: InfraUrls, migrated_database: str, kwin: KWin, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    env = {**kwin.env(), **infra.env()}
    env.pop("KRONII_SENSOR_DISPLAY", None)
    env.update(
        KRONII_DATABASE_URL=migrated_database,
        KRONII_DATA_DIR=str(tmp_path_factory.mktemp("sensor-kde")),
        KRONII_SENSOR_TICK_INTERVAL_SECS="0.2",
        DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
    )
    with start_service("sensor", env, stop="kill") as sensor:
        yield sensor.url


def test_kwin_focus_changes_are_focus_changed_events_and_the_snapshot_names_the_app_id(
    infra: InfraUrls, kwin: KWin, sensor_url: str
) -> None:
    events = FocusEvents(infra.nats)
    try:
        for client in (GTK4, QT5):
            process = kwin.open(client)
            wait_until(
                lambda app=client.app_id: bool(events.apps()) and events.apps()[-1].lower() == app.lower(),  # type: ignore[misc]
                15,
                f"FocusChanged to {client.app_id}",
            )
            # The snapshot is stored right after the event is published.
            wait_until(lambda app=client.app_id: _snapshot_app(sensor_url) == app.lower(), 5, "the snapshot")  # type: ignore[misc]
            snapshot = httpx.get(f"{sensor_url}/v1/snapshot", timeout=5).json()
            assert snapshot["focus"]["pid"] == process.pid
    finally:
        events.close()
    # KWin lets go of the focus while a new window maps: the events between two apps may pass through none.
    apps = [app.lower() for app in events.apps() if app]
    assert apps == [GTK4.app_id.lower(), QT5.app_id.lower()], events.apps()
    display = httpx.get(f"{sensor_url}/readyz", timeout=5).json()["dependencies"]["display"]
    assert display["ready"] is True and "KDE Plasma (KWin)" in display["detail"], display


def _snapshot_app(url: str) -> str:
    return str(httpx.get(f"{url}/v1/snapshot", timeout=5).json()["focus"]["app_name"]).lower()


def test_kronii_doctor_on_kde_says_the_focus_comes_from_kronii_s_kwin_script(kwin: KWin) -> None:
    kronii = str(Path(sys.executable).with_name("kronii"))
    doctor = subprocess.run([kronii, "doctor"], env=kwin.env(), capture_output=True, text=True, timeout=60)
    out = doctor.stdout + doctor.stderr
    assert "KDE Plasma (KWin)" in out and "kronii's KWin script" in out, out
    # a fresh home: the person has not authorised capture, and doctor names the command that does
    assert "you have not authorised kronii's capture: run `kronii capture kde allow`" in out, out
