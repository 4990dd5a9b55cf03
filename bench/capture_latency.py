"""The capture service end to end under Xvfb (1280x800, an xterm full of text and planted secrets):

- latency, one job at a time: from RequestScreenCapture to PERSISTED, p50/p95, with the burst's own
  time (3 frames 300 ms apart: about 600 ms by design) reported separately from the processing per
  job (scoring with OCR, redaction, encryption and storage);
- baseline in the same run: one plain Tesseract pass over the whole 1280x800 screen (what a naive
  "OCR the screenshot" costs), single-threaded (OMP_THREAD_LIMIT=1, the anchor: on 2 cores Tesseract's
  default threads spin against each other and cost several times the CPU) and with its default threads,
  next to the per-job processing; CPU seconds (the service's own and its Tesseract children's, per job;
  the baseline's Tesseract process) beside wall times, and the ratio from the same run;
- sustained: jobs back to back with the window focused (rate limits lifted): jobs per minute;
- the service's peak memory (VmHWM).

The sensor is stood in for (focus events on NATS and its Redis snapshot): its own latency is
bench/sensor_focus.py's.

Usage: python bench/capture_latency.py [--jobs 12] [--sustained 12]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc
from _common import cpu_seconds, full_frame_ocr, machine, save, summary_ms
from kronii.capture.v1 import capture_pb2 as pb
from kronii.capture.v1 import capture_pb2_grpc as pb_grpc
from kronii.stores.db import migrate_up

from tests.desktop import start_xvfb
from tests.infra import create_database, start_test_infra
from tests.integration.capture.capture_support import (
    PLANTED_TEXT,
    FakeSensor,
    PlantedWindow,
    capture_env,
    planted_window,
    start_capture,
)

PAGE = "\n".join([PLANTED_TEXT] * 3)


def _seconds(status: pb.CaptureStatus) -> float:
    return status.at.ToMilliseconds() / 1000


def peak_memory_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


async def one_job(
    stub: pb_grpc.ScreenCaptureStub, sensor: FakeSensor, window: PlantedWindow, n: int
) -> dict[str, float]:
    await sensor.focus(None)
    started = time.time()
    job = await stub.RequestScreenCapture(
        pb.CaptureRequest(
            process_id=window.pid, window_id=window.window_id, bypass=pb.STRICT, requester=f"bench.{n}"
        ),
        timeout=30,
    )
    await sensor.focus(window)
    seen = [status async for status in stub.WatchCapture(job, timeout=120)]
    if seen[-1].status != pb.PERSISTED:
        raise RuntimeError(f"job ended {pb.CaptureStatusCode.Name(seen[-1].status)}: {seen[-1].reason}")
    at = {status.status: _seconds(status) for status in seen}
    return {
        "match_to_persisted": at[pb.PERSISTED] - at[pb.CAPTURING],
        "burst": at[pb.SCORING] - at[pb.CAPTURING],
        "scoring": at[pb.REDACTING] - at[pb.SCORING],
        "redaction_and_sealing": at[pb.PERSISTED] - at[pb.REDACTING],
        "processing": at[pb.PERSISTED] - at[pb.SCORING],
        "request_to_persisted": time.time() - started,
    }


async def sustained(
    stub: pb_grpc.ScreenCaptureStub, sensor: FakeSensor, window: PlantedWindow, count: int
) -> float:
    await sensor.focus(window)
    started = time.perf_counter()
    jobs = [
        await stub.RequestScreenCapture(
            pb.CaptureRequest(
                process_id=window.pid,
                window_id=window.window_id,
                bypass=pb.WINDOW_RELAXED,
                requester=f"load.{n}",
            ),
            timeout=30,
        )
        for n in range(count)
    ]
    done = 0
    for job in jobs:
        statuses = [status async for status in stub.WatchCapture(job, timeout=600)]
        done += statuses[-1].status == pb.PERSISTED
    elapsed = time.perf_counter() - started
    return round(done / elapsed * 60, 1)


async def run(jobs: int, load: int) -> None:
    with (
        start_test_infra() as infra,
        start_xvfb(screen="1280x800x24") as display,
        tempfile.TemporaryDirectory() as tmp,
    ):
        database = create_database(infra.database, "kronii_bench_capture")
        migrate_up(database)
        env = capture_env(infra, database, Path(tmp), display)
        env.update(KRONII_CAPTURE_GLOBAL_PER_MINUTE="100000", KRONII_CAPTURE_PER_APP_PER_MINUTE="100000")
        sensor = FakeSensor(infra)
        await sensor.start()
        with planted_window(display, PAGE, geometry="200x60+0+0") as window, start_capture(env) as service:
            async with grpc.aio.insecure_channel(service.unix_target) as channel:
                stub = pb_grpc.ScreenCaptureStub(channel)
                await one_job(stub, sensor, window, -1)  # warm-up: Tesseract's model, the key file
                cpu_before = cpu_seconds(service.proc.process.pid)
                samples = [await one_job(stub, sensor, window, n) for n in range(jobs)]
                cpu_per_job = (cpu_seconds(service.proc.process.pid) - cpu_before) / jobs
                single = [
                    await asyncio.to_thread(full_frame_ocr, display, single_thread=True) for _ in range(3)
                ]
                threaded = [
                    await asyncio.to_thread(full_frame_ocr, display, single_thread=False) for _ in range(3)
                ]
                per_minute = await sustained(stub, sensor, window, load)
            memory = peak_memory_mb(service.proc.process.pid)
        await sensor.close()
    figures: dict[str, Any] = {
        "machine": machine(),
        "screen": "1280x800, xterm 200x60 of text with planted secrets",
        "burst": "3 frames, 300 ms apart",
        "request_to_persisted": summary_ms([s["request_to_persisted"] for s in samples]),
        "match_to_persisted": summary_ms([s["match_to_persisted"] for s in samples]),
        "burst_time": summary_ms([s["burst"] for s in samples]),
        "processing_per_job": summary_ms([s["processing"] for s in samples]),
        # A burst with one frame worth reading is scored from the redaction's reading of it: its
        # SCORED step (REDACTING on the wire) then follows that OCR, and the rest is the sealing.
        "scoring_and_ocr": summary_ms([s["scoring"] for s in samples]),
        "after_scored_to_persisted": summary_ms([s["redaction_and_sealing"] for s in samples]),
        "baseline_full_frame_tesseract_single_thread": summary_ms([wall for wall, _ in single]),
        "baseline_full_frame_tesseract_default_threads": summary_ms([wall for wall, _ in threaded]),
        "cpu_s_per_job": round(cpu_per_job, 3),
        "baseline_cpu_s_single_thread": round(statistics.median(cpu for _, cpu in single), 3),
        "baseline_cpu_s_default_threads": round(statistics.median(cpu for _, cpu in threaded), 3),
        "cpu_per_job_over_single_thread_pass": round(
            cpu_per_job / statistics.median(cpu for _, cpu in single), 2
        ),
        "sustained_jobs_per_minute": per_minute,
        "service_peak_memory_mb": memory,
    }
    save("capture_latency", figures)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--jobs", type=int, default=12)
    parser.add_argument("--sustained", type=int, default=12)
    args = parser.parse_args()
    asyncio.run(run(args.jobs, args.sustained))


if __name__ == "__main__":
    main()
