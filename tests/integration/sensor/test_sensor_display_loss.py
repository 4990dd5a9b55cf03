"""The X server going away under a running sensor: it says so once, reports it in /readyz, and keeps
running on Tick alone."""

from __future__ import annotations

import os
import time
from pathlib import Path

import httpx
import psutil

from tests.desktop import start_xvfb
from tests.infra import InfraUrls
from tests.mesh import start_service, wait_until


def test_sensor_survives_losing_its_display(infra: InfraUrls, migrated_database: str, tmp_path: Path) -> None:
    started = time.time() - 1
    with start_xvfb() as display:
        xvfb = [
            child
            for child in psutil.Process().children(recursive=True)
            if child.name() == "Xvfb" and child.create_time() >= started
        ]
        assert len(xvfb) == 1
        env = dict(os.environ)
        env.update(infra.env())
        env.update(
            KRONII_DATABASE_URL=migrated_database,
            KRONII_DATA_DIR=str(tmp_path / "data"),
            DISPLAY=display,
            DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
            DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
            KRONII_SENSOR_TICK_INTERVAL_SECS="0.2",
        )
        with start_service("sensor", env, stop="kill") as sensor:
            url, proc = sensor.url, sensor.proc
            assert httpx.get(f"{url}/readyz").json()["dependencies"]["display"]["ready"] is True

            xvfb[0].kill()

            def display_reported_lost() -> bool:
                detail = httpx.get(f"{url}/readyz").json()["dependencies"]["display"]
                return detail["ready"] is False and "lost the display" in detail["detail"]

            wait_until(display_reported_lost, 10, "/readyz to report the lost display")
            time.sleep(1.0)  # several ticks: the loss must not be logged again on each one
            assert httpx.get(f"{url}/readyz").status_code == 200
            assert httpx.get(f"{url}/v1/snapshot").json()["display_available"] is False
            said = [
                line for line in proc.lines if "lost the display" in line and "runs on Tick alone" in line
            ]
            assert len(said) == 1, said
            code, _ = proc.terminate()
            assert code == 0, proc.output[-2000:]
