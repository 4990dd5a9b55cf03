"""What the activity history costs: an hour of normal use, compressed, through the real sensor use
cases into real PostgreSQL, against ActivityWatch's aw-server (sqlite) fed the same hour's
heartbeats through its REST API in the same run.

The hour (seeded): a focus change every 3 to 20 s (about every 10 s) among five apps and their
titles, a Tick every second (the sensor's default), input that keeps the person active, a coffee
break long enough to go passive then inactive, and a screen lock. kronii's side: the sensor core,
PublishActivity (a publisher that drops the events: NATS is not the history's cost), RecordActivity
writing the envelopes into activity_events, and KeepSpans writing spans into activity_spans with
its flush every 30 s of the hour. ActivityWatch's side: what aw-watcher-window (a heartbeat per
1 s poll, pulsetime 2 s) and aw-watcher-afk (a heartbeat per 5 s poll, pulsetime 6 s) send for the
same hour, posted to aw-server with their timestamps.

Figures: CPU seconds of the sensor's side (this process while it runs the hour) and of the
PostgreSQL server processes; rows added per hour (spans, events); the same hour without the span
keeper first, so the history's own share shows (history_cpu_s). aw-server's CPU seconds (its
process, sqlite inside) and the events in its sqlite file.

Usage: python bench/activity_history.py [--aw-venv VENV] [--seed 7]
  VENV (or $AW_VENV): a venv with aw-server, as scripts/make_aw_export.sh sets up; without it only
  kronii's side is measured.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import _common
import httpx
import psutil
from kronii.foundation.clock import ManualClock
from kronii.launcher.infra import free_port
from kronii.sensor.adapters.events import ActivityEventStore
from kronii.sensor.adapters.spans import SpanTable
from kronii.sensor.adapters.titles import TitleRedactor
from kronii.sensor.core.machine import SensorCore
from kronii.sensor.core.model import (
    Focus,
    FocusObserved,
    LockEnd,
    LockStart,
    SensorInput,
    Tick,
)
from kronii.sensor.core.params import SensorParams
from kronii.sensor.core.spans import SpanTracker
from kronii.sensor.metrics import SensorMetrics
from kronii.sensor.usecases.keep_spans import KeepSpans
from kronii.sensor.usecases.publish_activity import PublishActivity
from kronii.sensor.usecases.record_activity import RecordActivity
from kronii.sensor.usecases.watch_activity import ActivityFeed
from kronii.stores.db import make_engine, migrate_up
from prometheus_client import CollectorRegistry
from sqlalchemy import text

from tests.infra import create_database, start_test_infra

HOUR = 3600
START = 1_796_000_000.0  # a fixed wall time for the hour (2026-11-30), the same on both sides
APPS = [
    ("Code", ["service.py - kronii - Code", "machine.py - kronii - Code", "README.md - kronii - Code"]),
    ("firefox", ["Pull request #142 - Firefox", "asyncio docs - Firefox", "NATS JetStream - Firefox"]),
    ("kitty", ["dev@box: ~/src/kronii", "pytest -q tests/unit", "git status"]),
    ("Slack", ["Slack | #kronii-dev", "Slack | Maria Garcia"]),
    ("zoom", ["Zoom Meeting"]),
]
BREAK = (1500, 1500 + 420)  # 7 minutes with no input: passive after 30 s, inactive after 5 min
LOCK = (2700, 2700 + 180)


@dataclass(frozen=True)
class Seen:
    """One second of the hour as both sides see it."""

    at: float
    focus: Focus
    idle_s: float
    locked: bool
    switched: bool


def script(seed: int) -> Iterator[Seen]:
    rng = random.Random(seed)
    app_index, title, next_switch, last_input = 0, APPS[0][1][0], 0.0, START
    for second in range(HOUR):
        at = START + second
        quiet = BREAK[0] <= second < BREAK[1] or LOCK[0] <= second < LOCK[1]
        switched = False
        if not quiet and second >= next_switch:
            app_index = rng.randrange(len(APPS))
            title = rng.choice(APPS[app_index][1])
            next_switch = second + rng.uniform(3, 20)
            switched = True
        if not quiet and rng.random() < 0.7:
            last_input = at
        wm_class = APPS[app_index][0]
        focus = Focus(
            app_name=wm_class,
            wm_class=f"{wm_class.lower()}.{wm_class}",
            window_id=100 + app_index,
            title=title,
            pid=1000 + app_index,
        )
        yield Seen(at, focus, at - last_input, LOCK[0] <= second < LOCK[1], switched)


# ---- kronii ---------------------------------------------------------------------------------------


class _Dropped:
    async def publish(self, kind: str, event: Any) -> None:
        return None


def _inputs(seen: Seen, was_locked: bool) -> list[SensorInput]:
    inputs: list[SensorInput] = []
    if seen.locked and not was_locked:
        inputs.append(LockStart(seen.at, "bench"))
    if was_locked and not seen.locked:
        inputs.append(LockEnd(seen.at, "bench"))
    if seen.switched:
        inputs.append(FocusObserved(seen.at, seen.focus))
    inputs.append(Tick(seen.at, int(seen.idle_s * 1000)))
    return inputs


async def run_kronii(database: str, seed: int, *, history: bool = True) -> dict[str, Any]:
    engine = make_engine(database)
    clock = ManualClock(START)
    core = SensorCore(SensorParams(), START)
    titles = TitleRedactor()
    spans = KeepSpans(SpanTracker(10.0), SpanTable(engine), titles, clock, flush_secs=30.0)

    async def no_audit(**_: Any) -> None:
        return None

    record = RecordActivity(ActivityEventStore(engine), no_audit)
    metrics = SensorMetrics(SimpleNamespace(registry=CollectorRegistry()))  # type: ignore[arg-type]
    publish = PublishActivity(core, titles, _Dropped(), ActivityFeed(), record, metrics, clock)
    writer = asyncio.create_task(record.run())
    pg_before = _cpu(_postgres_processes())
    cpu_before, wall_before = time.process_time(), time.perf_counter()
    was_locked, switches = False, 0
    for seen in script(seed):
        clock.advance(seen.at - clock.wall())
        for event in _inputs(seen, was_locked):
            for effect in core.handle(event):
                await publish(effect, 0.0)
            if history:
                spans.observe(event.at, core.state, core.focus, core.locked)
        switches += seen.switched
        was_locked = seen.locked
        if history and int(seen.at - START) % 30 == 29:
            await spans.flush()
    await spans.stop()
    await record.flush(wait_secs=30)
    cpu, wall = time.process_time() - cpu_before, time.perf_counter() - wall_before
    pg_cpu = _cpu_since(pg_before)
    writer.cancel()
    async with engine.connect() as conn:
        span_rows = (
            await conn.execute(text("SELECT kind, count(*) FROM activity_spans GROUP BY kind"))
        ).all()
        event_rows = (await conn.execute(text("SELECT count(*) FROM activity_events"))).scalar_one()
        size = (
            await conn.execute(
                text(
                    "SELECT pg_total_relation_size('activity_spans') + pg_total_relation_size('activity_events')"
                )
            )
        ).scalar_one()
    await engine.dispose()
    by_kind = {kind: count for kind, count in span_rows}
    return {
        "focus_changes": switches,
        "sensor_cpu_s": round(cpu, 3),
        "wall_s": round(wall, 3),
        "postgres_cpu_s": round(pg_cpu, 3),
        "span_rows": by_kind,
        "event_rows": event_rows,
        "rows_per_hour": sum(by_kind.values()) + event_rows,
        "table_bytes": size,
    }


def _postgres_processes() -> list[psutil.Process]:
    return [proc for proc in psutil.process_iter(["name"]) if proc.info["name"] in ("postgres", "postmaster")]


def _cpu(processes: list[psutil.Process]) -> dict[int, float]:
    """CPU seconds of each process by pid (a backend started since counts from 0)."""
    seconds: dict[int, float] = {}
    for proc in processes:
        try:
            times = proc.cpu_times()
            seconds[proc.pid] = times.user + times.system
        except psutil.Error:
            pass
    return seconds


def _cpu_since(before: dict[int, float]) -> float:
    now = _cpu(_postgres_processes())
    return sum(seconds - before.get(pid, 0.0) for pid, seconds in now.items())


# ---- ActivityWatch --------------------------------------------------------------------------------


def run_aw(venv: Path, seed: int) -> dict[str, Any]:
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="kronii-bench-aw-") as home:
        env = {
            **os.environ,
            "XDG_DATA_HOME": f"{home}/data",
            "XDG_CONFIG_HOME": f"{home}/config",
            "XDG_CACHE_HOME": f"{home}/cache",
        }
        server = subprocess.Popen(
            [str(venv / "bin" / "aw-server"), "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            return _feed_aw(f"http://127.0.0.1:{port}/api/0", psutil.Process(server.pid), Path(home), seed)
        finally:
            server.terminate()
            server.wait(10)


def _feed_aw(api: str, server: psutil.Process, home: Path, seed: int) -> dict[str, Any]:
    with httpx.Client(base_url=api, timeout=30) as http:
        for _ in range(100):
            try:
                http.get("/info")
                break
            except httpx.TransportError:
                time.sleep(0.2)
        for bucket, kind in (("bench-window", "currentwindow"), ("bench-afk", "afkstatus")):
            http.post(
                f"/buckets/{bucket}", json={"client": "bench", "type": kind, "hostname": "bench"}
            ).raise_for_status()
        before = server.cpu_times()
        wall_before = time.perf_counter()
        heartbeats = 0
        for seen in script(seed):
            stamp = _aw_time(seen.at)
            if not seen.locked:  # aw-watcher-window sees the lock screen's window; nothing to compare: skip
                data = {"app": seen.focus.app_name, "title": seen.focus.title}
                http.post(
                    "/buckets/bench-window/heartbeat",
                    params={"pulsetime": 2.0},
                    json={"timestamp": stamp, "duration": 0, "data": data},
                ).raise_for_status()
                heartbeats += 1
            if int(seen.at - START) % 5 == 0:
                status = "afk" if seen.idle_s >= 180 or seen.locked else "not-afk"
                http.post(
                    "/buckets/bench-afk/heartbeat",
                    params={"pulsetime": 6.0},
                    json={"timestamp": stamp, "duration": 0, "data": {"status": status}},
                ).raise_for_status()
                heartbeats += 1
        after = server.cpu_times()
        wall = time.perf_counter() - wall_before
    databases = list(home.rglob("*.db"))
    rows = 0
    for database in databases:
        with sqlite3.connect(database) as conn:
            rows += conn.execute("SELECT count(*) FROM eventmodel").fetchone()[0]
    return {
        "heartbeats_sent": heartbeats,
        "aw_server_cpu_s": round((after.user + after.system) - (before.user + before.system), 3),
        "wall_s": round(wall, 3),
        "sqlite_event_rows": rows,
        "sqlite_bytes": sum(database.stat().st_size for database in databases),
    }


def _aw_time(at: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(at, UTC).isoformat()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--aw-venv", type=Path, default=os.environ.get("AW_VENV") or None)
    parser.add_argument("--seed", type=int, default=7)
    options = parser.parse_args()
    with start_test_infra() as infra:
        without = create_database(infra.database, "kronii_bench_no_history")
        migrate_up(without)
        baseline = asyncio.run(run_kronii(without, options.seed, history=False))
        database = create_database(infra.database, "kronii_bench_history")
        migrate_up(database)
        kronii = asyncio.run(run_kronii(database, options.seed))
    kronii["history_cpu_s"] = round(kronii["sensor_cpu_s"] - baseline["sensor_cpu_s"], 3)
    figures: dict[str, Any] = {
        "hour": f"compressed, seed {options.seed}",
        "kronii": kronii,
        "kronii_without_spans": baseline,
    }
    if options.aw_venv:
        figures["activitywatch"] = run_aw(options.aw_venv, options.seed)
    else:
        figures["activitywatch"] = "not measured: no --aw-venv (see scripts/make_aw_export.sh)"
    _common.save("activity_history", figures)


if __name__ == "__main__":
    main()
