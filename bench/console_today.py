"""What the console's Today page costs for a busy person: an 8-hour day with about 3,000 focus changes,
and a 30-day range of such days, in the real sensor's PostgreSQL table (activity_spans), served by the
real sensor and the real console (each its own process under uvicorn, as `kronii up` runs them), read
by a real Chromium.

The data (seeded): 30 days, each 09:00 to 17:00 in UTC, a focus change every 3 to 16 s (about 9.6 s:
3,000 a day) among 12 apps and 240 titles, state spans of a few minutes (active, now and then passive
or inactive, a lock at lunch). 90,000 focus spans and about 3,000 state spans in all, written straight
into activity_spans (the table the sensor's own API reads).

Figures: the server time of GET /today?day=<the last day> and GET /today?day=...&days=30 (p50/p95 over
the runs, measured at the client on loopback with a warm connection: the console's work plus its calls
to the sensor), and the first contentful paint in headless Chromium (Debian's, through Playwright) of
each page, read from `performance.getEntriesByName('first-contentful-paint')`, beside the first paint of
the console's small 401 page (no data): the floor of a fresh browser context on the machine.
Targets (issue 33): server p95 < 150 ms, first paint < 500 ms.

Usage: python bench/console_today.py [--runs 40] [--paints 10] [--seed 3]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import _common
import httpx
import psycopg
from kronii.foundation.urls import libpq_url
from kronii.stores.db import migrate_up

from tests.infra import create_database, start_test_infra
from tests.mesh import RunningService, start_service

KRONII = str(Path(sys.executable).parent / "kronii")
DAYS = 30
APPS = [f"app{n:02d}" for n in range(12)]


def _spans(day: date, rng: random.Random) -> Iterator[tuple[Any, ...]]:
    """(kind, started_at, ended_at, app, title, window_id, wm_class, state) rows of one busy day."""
    at = datetime.combine(day, datetime.min.time(), UTC) + timedelta(hours=9)
    end = at + timedelta(hours=8)
    focus_at = at
    while focus_at < end:
        length = timedelta(seconds=rng.uniform(3, 16.2))
        app = rng.choice(APPS)
        title = f"{app} document {rng.randrange(20)}"
        yield (
            "focus",
            focus_at,
            min(focus_at + length, end),
            app,
            title,
            rng.randrange(1, 1 << 30),
            app,
            None,
        )
        focus_at += length
    state_at = at
    while state_at < end:
        length = timedelta(minutes=rng.uniform(2, 14))
        state = (
            "locked"
            if 12 <= state_at.hour < 13 and rng.random() < 0.3
            else rng.choices(["active", "passive", "inactive"], [0.8, 0.15, 0.05])[0]
        )
        yield ("state", state_at, min(state_at + length, end), None, None, None, None, state)
        state_at += length


def load_history(database: str, last_day: date, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    counts = {"focus": 0, "state": 0}
    with psycopg.connect(libpq_url(database)) as connection, connection.cursor() as cursor:
        with cursor.copy(
            "COPY activity_spans (kind, started_at, ended_at, app, title, window_id, wm_class, state) FROM STDIN"
        ) as copy:
            for offset in range(DAYS):
                for row in _spans(last_day - timedelta(days=offset), rng):
                    copy.write_row(row)
                    counts[row[0]] += 1
        connection.commit()
        cursor.execute("ANALYZE activity_spans")
    return counts


@contextlib.contextmanager
def services(database: str, nats: str, redis: str) -> Iterator[tuple[RunningService, RunningService]]:
    data_dir = Path(tempfile.mkdtemp(prefix="kronii-bench-console-"))
    env = {
        key: value for key, value in os.environ.items() if not key.startswith("KRONII_") and key != "DISPLAY"
    }
    env.update(
        KRONII_NATS_URL=nats, KRONII_REDIS_URL=redis, KRONII_DATABASE_URL=database,
        KRONII_DATA_DIR=str(data_dir / "data"), KRONII_CONFIG=str(data_dir / "none.toml"),
        KRONII_LOG_LEVEL="WARNING", KRONII_CONSOLE_TIMEZONE="UTC",
        KRONII_SENSOR_ACTIVITY_RETENTION_DAYS="400",
    )  # fmt: skip
    try:
        with start_service("sensor", env, timeout=60) as sensor:
            env["KRONII_SENSOR_HTTP_PORT"] = str(sensor.http_port)
            env["KRONII_SENSOR_GRPC_PORT"] = str(sensor.grpc_port)
            with start_service("console", env, timeout=60) as console:
                yield sensor, console
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def login_cookie(console: RunningService) -> str:
    done = subprocess.run(
        [KRONII, "console", "--no-browser", "--url", console.url],
        env=console.env, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    link = done.stdout.strip().splitlines()[-1]
    answer = httpx.get(link, follow_redirects=False, timeout=10)
    assert answer.status_code == 303, answer.text
    return str(answer.cookies["kronii_console"])


def server_times(client: httpx.Client, path: str, runs: int) -> dict[str, Any]:
    client.get(path)  # warm: the connection, the templates, PostgreSQL's cache
    took = []
    for _ in range(runs):
        started = time.perf_counter()
        answer = client.get(path)
        took.append(time.perf_counter() - started)
        assert answer.status_code == 200, answer.text[:500]
    figures = _common.summary_ms(took)
    figures["bytes"] = len(answer.content)
    figures["rects"] = answer.text.count("<rect")
    return figures


def first_paints(url: str, cookie: str, paths: dict[str, str], count: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    out: dict[str, Any] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=shutil.which("chromium"), args=["--no-sandbox", "--disable-dev-shm-usage"]
        )
        for name, path in paths.items():
            paints = []
            for _ in range(count):
                context = browser.new_context(viewport={"width": 1280, "height": 860})
                if cookie:
                    context.add_cookies([{"name": "kronii_console", "value": cookie, "url": url}])
                page = context.new_page()
                page.goto(url + path, wait_until="load")
                paint = page.evaluate(
                    "new Promise(done => { const read = () => { const e = performance.getEntriesByName("
                    "'first-contentful-paint')[0]; e ? done(e.startTime) : setTimeout(read, 20); }; read(); })"
                )
                paints.append(float(paint) / 1000)
                context.close()
            out[name] = _common.summary_ms(paints)
        browser.close()
    return out


def sensor_times(sensor_url: str, last_day: date, runs: int) -> dict[str, Any]:
    """The sensor's part of the day's page: its spans (one page of up to 5,000, as the console asks)."""
    since = datetime.combine(last_day, datetime.min.time(), UTC)
    params = {"since": since.isoformat(), "until": (since + timedelta(days=1)).isoformat(), "limit": "5000"}
    with httpx.Client(base_url=sensor_url, timeout=30) as client:
        return {"day_spans": server_times(client, "/v1/activity/spans?" + urlencode(params), runs)}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--paints", type=int, default=10)
    parser.add_argument("--seed", type=int, default=3)
    options = parser.parse_args()
    last_day = datetime.now(UTC).date() - timedelta(days=1)
    with start_test_infra() as infra:
        database = create_database(infra.database, "kronii_bench_console")
        migrate_up(database)
        loaded = load_history(database, last_day, options.seed)
        with services(database, infra.nats, infra.redis) as (_sensor, console):
            cookie = login_cookie(console)
            paths = {
                "day": f"/today?day={last_day.isoformat()}",
                "30_days": f"/today?day={last_day.isoformat()}&days={DAYS}",
            }
            with httpx.Client(base_url=console.url, cookies={"kronii_console": cookie}, timeout=30) as client:
                server = {name: server_times(client, path, options.runs) for name, path in paths.items()}
            server["of_which_sensor"] = sensor_times(_sensor.url, last_day, options.runs)
            paint = first_paints(console.url, cookie, paths, options.paints)
            # The floor on this machine: the console's small 401 page (no data, the same css and head).
            paint["floor_401_page"] = first_paints(console.url, "", {"p": "/today"}, options.paints)["p"]
    _common.save(
        "console_today",
        {
            "machine": _common.machine(),
            "history": {
                "days": DAYS,
                "focus_spans": loaded["focus"],
                "state_spans": loaded["state"],
                "focus_spans_per_day": loaded["focus"] // DAYS,
            },
            "server_time": server,
            "first_contentful_paint": paint,
            "targets": {"server_p95_ms": 150, "first_paint_ms": 500},
        },
    )


if __name__ == "__main__":
    main()
