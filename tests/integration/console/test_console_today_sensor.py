"""Today against the real sensor (its process, its PostgreSQL table): a busy day's sums, which the
console adds up from the day's spans it read for the picture, are the sensor's own summary to the
millisecond, for apps, titles and states; a 30-day range takes its sums from the sensor's summary."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from kronii.console.adapters.sensor_history import SensorHistory
from kronii.console.adapters.service_clients import HttpServiceClients
from kronii.console.core.timeline import SummaryRow
from kronii.console.usecases.show_today import ShowToday, day_range
from kronii.foundation.clock import ManualClock
from kronii.foundation.urls import libpq_url

from tests.infra import InfraUrls, create_database
from tests.mesh import RunningService, start_service

DAY = date(2026, 11, 20)


def _load(database: str) -> None:
    rng = random.Random(5)
    rows: list[tuple[str, datetime, datetime, str | None, str | None, str | None]] = []
    for offset in range(3):
        at = datetime.combine(DAY - timedelta(days=offset), datetime.min.time(), UTC) + timedelta(hours=9)
        # a span that began the night before and one that runs past midnight: the clipping counts
        rows.append(
            ("focus", at - timedelta(hours=10), at - timedelta(hours=8, minutes=58), "night", "late", None)
        )
        end = at + timedelta(hours=2)
        while at < end:
            length = timedelta(seconds=rng.uniform(3, 16))
            app = f"app{rng.randrange(6)}"
            rows.append(("focus", at, at + length, app, f"{app} doc {rng.randrange(7)}", None))
            at += length
        rows.append(("state", at - timedelta(hours=2), at, None, None, "active"))
        rows.append(("state", at, at + timedelta(hours=15), None, None, "locked"))
    with psycopg.connect(libpq_url(database)) as connection, connection.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO activity_spans (kind, started_at, ended_at, app, title, state) VALUES (%s, %s, %s, %s, %s, %s)",
            rows,
        )


@pytest.fixture(scope="module")
def sensor(infra: InfraUrls, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningService]:
    from kronii.stores.db import migrate_up

    database = create_database(infra.database, "kronii_console_today_sensor")
    migrate_up(database)
    _load(database)
    folder = tmp_path_factory.mktemp("sensor")
    env = {
        key: value for key, value in os.environ.items() if not key.startswith("KRONII_") and key != "DISPLAY"
    }
    env.update(infra.env())
    env.update(
        KRONII_DATABASE_URL=database, KRONII_DATA_DIR=str(folder / "data"),
        KRONII_CONFIG=str(Path(folder) / "none.toml"), KRONII_SENSOR_ACTIVITY_RETENTION_DAYS="400",
    )  # fmt: skip
    with start_service("sensor", env, timeout=60) as running:
        yield running


def _rows(rows: list[SummaryRow]) -> dict[tuple[str, str | None], float]:
    return {(row.key, row.app): round(row.seconds, 3) for row in rows}


async def test_a_days_sums_added_up_by_the_console_are_the_sensors_summary(sensor: RunningService) -> None:
    clients = HttpServiceClients({"sensor": sensor.url}, api_token=None, timeout_secs=10)
    history = SensorHistory(clients)
    clock = ManualClock(datetime(2026, 11, 25, tzinfo=UTC).timestamp())
    try:
        view = await ShowToday(history, clock, UTC).view(DAY.isoformat())
        since, until = day_range(DAY, 1, UTC)
        for by, shown in (("app", view.apps), ("title", view.titles), ("state", view.states)):
            sensor_rows = (await history.summary(since, until, by=by)).rows
            assert (
                _rows([SummaryRow(r.key, r.app, r.seconds) for r in shown if r.key != "other"]).items()
                <= {key: value for key, value in _rows(sensor_rows).items()}.items()
            ), by
        night = [row for row in view.apps if row.key == "night"]
        assert night and round(night[0].seconds) == 60 * 2  # clipped at midnight: 2 of its 62 minutes
        month = await ShowToday(history, clock, UTC).view(DAY.isoformat(), 3)
        month_since, month_until = day_range(DAY, 3, UTC)
        assert _rows([SummaryRow(r.key, r.app, r.seconds) for r in month.apps]) == _rows(
            (await history.summary(month_since, month_until, by="app")).rows
        )
    finally:
        await clients.close()
