"""Trigger to decision with the `rules` backend, with the pipeline running as a real process on
real NATS/Redis/PostgreSQL: a FocusChanged published on NATS to the notification on NATS (p50/p95);
then a storm of title changes: events per second in, runs per second out, the pipeline's CPU."""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import httpx
import psutil
from _common import machine, save, summary_ms
from kronii.activity.v1 import activity_pb2 as apb
from kronii.pipeline.v1 import pipeline_pb2 as pb
from kronii.stores import subjects
from kronii.stores.bus import Bus

from tests.infra import start_test_infra
from tests.integration.pipeline.pipeline_support import pipeline_database, pipeline_env, start_pipeline

COALESCE_MS = 100


async def decisions(nats: str, count: int) -> list[float]:
    bus = Bus("bench-decision")
    await bus.connect(nats)
    arrived: asyncio.Queue[float] = asyncio.Queue()

    async def on_note(_subject: str, _message: pb.Notification) -> None:
        arrived.put_nowait(time.perf_counter())

    await bus.subscribe(subjects.NOTIFY, on_note)
    latencies = []
    for i in range(count):
        focus = apb.Focus(
            app_name=f"code{i % 2}",
            wm_class="Code",
            window_id=1000 + i,
            title=f"file{i}.py - bench - Visual Studio Code",
        )
        sent = time.perf_counter()
        # Title changes of distinct windows: focus changes this fast would be (rightly) deferred as thrash.
        await bus.publish(subjects.TITLE_CHANGED, apb.TitleChanged(focus=focus))
        latencies.append(await asyncio.wait_for(arrived.get(), 10) - sent)
        await asyncio.sleep(0.05)
    await bus.close()
    return latencies


async def storm(nats: str, events: int) -> float:
    bus = Bus("bench-storm")
    await bus.connect(nats)
    started = time.perf_counter()
    for i in range(events):
        focus = apb.Focus(app_name="term", wm_class="XTerm", window_id=7, title=f"build {i}")
        await bus.publish(subjects.TITLE_CHANGED, apb.TitleChanged(focus=focus))
    await bus.client.flush()
    elapsed = time.perf_counter() - started
    await bus.close()
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--decisions", type=int, default=50)
    parser.add_argument("--storm", type=int, default=10_000)
    args = parser.parse_args()
    with start_test_infra() as infra, tempfile.TemporaryDirectory() as tmp:
        env = pipeline_env(
            infra,
            pipeline_database(infra, "bench"),
            Path(tmp),
            KRONII_PIPELINE_MAX_COOLDOWN_SECS="0",
            KRONII_LOG_LEVEL="WARNING",
            # Measures the pipeline, not the coalescing wait (1.5 s by default, added to every title batch).
            KRONII_PIPELINE_COALESCE_WINDOW_MS=str(COALESCE_MS),
        )
        with start_pipeline(env) as pipeline:
            latencies = asyncio.run(decisions(infra.nats, args.decisions))
            process = psutil.Process(pipeline.proc.process.pid)
            runs_before = len(pipeline.runs())
            cpu_before = sum(process.cpu_times()[:2])
            wall_started = time.perf_counter()
            sent_secs = asyncio.run(storm(infra.nats, args.storm))
            deadline = time.monotonic() + 30
            while (
                time.monotonic() < deadline
                and httpx.get(f"{pipeline.url}/v1/state").json()["pending_batches"]
            ):
                time.sleep(0.1)
            time.sleep(2.0)
            wall = time.perf_counter() - wall_started
            cpu = sum(process.cpu_times()[:2]) - cpu_before
            storm_runs = len(pipeline.runs()) - runs_before
            state = httpx.get(f"{pipeline.url}/v1/state").json()
    save(
        "pipeline_decision",
        {
            "machine": machine(),
            "coalesce_window_ms": COALESCE_MS,
            "trigger_to_notification": summary_ms(latencies),
            "storm": {
                "events": args.storm,
                "events_per_sec_in": round(args.storm / sent_secs),
                "runs_out": storm_runs,
                "runs_per_sec_out": round(storm_runs / wall, 3),
                "dropped_title_churn": state["dropped_title_churn"],
                "pipeline_cpu_secs": round(cpu, 2),
                "pipeline_cpu_percent_of_one_core": round(100 * cpu / wall, 1),
                "wall_secs": round(wall, 2),
            },
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
