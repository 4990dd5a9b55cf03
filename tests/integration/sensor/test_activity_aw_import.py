"""A real ActivityWatch export (tests/data/activity/aw_export.json, made by scripts/make_aw_export.sh
with aw-server and its window and AFK watchers on Xvfb) imported into a real sensor by
`kronii activity import-aw`: the time per app is ActivityWatch's own report of it
(aw_report.json, from aw-server's query API) within a second, with and without the AFK periods;
importing it again adds nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from kronii.stores.db import migrate_up

from tests.infra import InfraUrls, create_database
from tests.mesh import start_service

DATA = Path(__file__).resolve().parents[2] / "data" / "activity"


@pytest.fixture(scope="module")
def sensor_url(infra: InfraUrls, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    database = create_database(infra.database, "kronii_activity_aw")
    migrate_up(database)
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "KRONII_SENSOR_DISPLAY")}
    env.update(infra.env())
    env.update(
        KRONII_DATABASE_URL=database,
        KRONII_DATA_DIR=str(tmp_path_factory.mktemp("sensor") / "data"),
        DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
        DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
    )
    with start_service("sensor", env, stop="kill") as sensor:
        yield sensor.url


def _import(url: str) -> dict[str, Any]:
    code = "import sys; from kronii.launcher.cli.main import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run(
        [sys.executable, "-c", code, "activity", "--url", url, "import-aw", str(DATA / "aw_export.json"), "--json"],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    counts: dict[str, Any] = json.loads(done.stdout)
    return counts


def _period() -> tuple[str, str]:
    """From the export's first event to its last end."""
    export = json.loads((DATA / "aw_export.json").read_text())
    starts, ends = [], []
    for bucket in export["buckets"].values():
        for event in bucket["events"]:
            at = datetime.fromisoformat(event["timestamp"])
            starts.append(at.timestamp())
            ends.append(at.timestamp() + event["duration"])
    return (
        datetime.fromtimestamp(min(starts) - 1).astimezone().isoformat(),
        datetime.fromtimestamp(max(ends) + 1).astimezone().isoformat(),
    )


def _overlap(spans: list[dict[str, Any]], start: float, end: float) -> float:
    total = 0.0
    for span in spans:
        total += max(0.0, min(end, _at(span["end"])) - max(start, _at(span["start"])))
    return total


def _at(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def test_import_gives_activitywatchs_own_time_per_app_and_adds_nothing_the_second_time(
    sensor_url: str,
) -> None:
    report = json.loads((DATA / "aw_report.json").read_text())
    first = _import(sensor_url)
    assert first["added"] == first["spans"] > 0
    assert first["buckets_skipped"] == []
    since, until = _period()
    summary = httpx.get(
        f"{sensor_url}/v1/activity/summary", params={"since": since, "until": until, "by": "app"}
    ).json()
    ours = {row["key"]: row["seconds"] for row in summary["rows"]}
    assert set(ours) == set(report["seconds_per_app"])
    for app, seconds in report["seconds_per_app"].items():
        assert ours[app] == pytest.approx(seconds, abs=1.0), app

    # With the AFK periods left out (aw-webui's "filter AFK"): focus time inside the active spans.
    spans = httpx.get(
        f"{sensor_url}/v1/activity/spans", params={"since": since, "until": until, "limit": 5000}
    ).json()["spans"]
    active = [span for span in spans if span["kind"] == "state" and span["state"] == "active"]
    for app, seconds in report["seconds_per_app_not_afk"].items():
        mine = sum(
            _overlap(active, _at(span["start"]), _at(span["end"]))
            for span in spans
            if span["kind"] == "focus" and span["app"] == app
        )
        assert mine == pytest.approx(seconds, abs=1.0), app

    again = _import(sensor_url)
    assert again["added"] == 0 and again["already_there"] == first["spans"]
    after = httpx.get(
        f"{sensor_url}/v1/activity/summary", params={"since": since, "until": until, "by": "app"}
    ).json()
    assert after["rows"] == summary["rows"]
