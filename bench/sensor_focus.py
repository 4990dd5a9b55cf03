"""Focus-change latency and the sensor's CPU cost, on Xvfb with openbox and real xterm windows.

- latency: xdotool switches focus N times; from the moment xdotool is invoked to the FocusChanged
  event arriving at a NATS subscriber (p50/p95/max), and inside the sensor from the X event to the
  publish (its kronii_sensor_focus_latency_seconds histogram);
- cost: CPU seconds per hour of the sensor process, idle and under 60 focus switches a minute.

Usage: python bench/sensor_focus.py [--switches 200] [--cost-seconds 60]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time

import httpx
import psutil
from _common import machine, save, summary_ms
from google.protobuf.message import Message
from kronii.activity.v1 import activity_pb2 as pb
from kronii.launcher.infra import free_port
from kronii.stores import subjects
from kronii.stores.bus import Bus
from kronii.stores.db import migrate_up

from tests.desktop import open_window, start_session_bus, start_xvfb
from tests.infra import start_test_infra
from tests.mesh import Proc, python_module, wait_http_ready


def _histogram_quantiles(metrics_text: str) -> dict[str, float]:
    buckets: list[tuple[float, float]] = []
    count = 0.0
    for line in metrics_text.splitlines():
        if line.startswith("kronii_sensor_focus_latency_seconds_bucket"):
            le = line.split('le="')[1].split('"')[0]
            buckets.append((float("inf") if le == "+Inf" else float(le), float(line.rsplit(" ", 1)[1])))
        elif line.startswith("kronii_sensor_focus_latency_seconds_count"):
            count = float(line.rsplit(" ", 1)[1])
    result: dict[str, float] = {"n": count}
    for name, fraction in (("p50_le_ms", 0.5), ("p95_le_ms", 0.95)):
        bound = next((b for b, c in buckets if count and c >= fraction * count), float("nan"))
        result[name] = bound * 1000
    return result


async def _activate(window_id: int, env: dict[str, str]) -> None:
    process = await asyncio.create_subprocess_exec("xdotool", "windowactivate", str(window_id), env=env)
    if await process.wait() != 0:
        raise RuntimeError(f"xdotool windowactivate {window_id} failed")


async def run(switches: int, cost_seconds: float) -> None:
    with start_xvfb() as display, start_session_bus() as bus_address, start_test_infra() as infra:
        migrate_up(infra.database)
        http = free_port()
        env = dict(os.environ)
        env.update(infra.env())
        env.update(
            DISPLAY=display,
            DBUS_SESSION_BUS_ADDRESS=bus_address,
            KRONII_DATA_DIR=tempfile.mkdtemp(prefix="kronii-bench-"),
            KRONII_SENSOR_HTTP_PORT=str(http),
            KRONII_SENSOR_GRPC_PORT=str(free_port()),
            KRONII_LOG_LEVEL="WARNING",
        )
        sensor = Proc(python_module("kronii.sensor"), env)
        windows = [open_window(display, f"bench window {n}", f"KroniiBench{n}") for n in range(2)]
        bus = Bus("bench")
        await bus.connect(infra.nats)
        arrivals: asyncio.Queue[tuple[float, Message]] = asyncio.Queue()

        async def on_focus(subject: str, message: pb.FocusChanged) -> None:
            await arrivals.put((time.perf_counter(), message))

        await bus.subscribe(subjects.FOCUS_CHANGED, on_focus)
        await bus.client.flush()
        try:
            wait_http_ready(f"http://127.0.0.1:{http}", proc=sensor)
            xenv = {**os.environ, "DISPLAY": display}
            latencies: list[float] = []
            for n in range(switches):
                target = windows[n % 2]
                while not arrivals.empty():
                    arrivals.get_nowait()
                started = time.perf_counter()
                # The loop keeps running while xdotool does: arrivals are stamped as they come.
                switcher = asyncio.create_task(_activate(target.window_id, xenv))
                while True:
                    arrived, message = await asyncio.wait_for(arrivals.get(), 5)
                    assert isinstance(message, pb.FocusChanged)
                    if message.current.window_id == target.window_id:
                        latencies.append(arrived - started)
                        break
                await switcher
            metrics = await asyncio.to_thread(httpx.get, f"http://127.0.0.1:{http}/metrics")
            inside = _histogram_quantiles(metrics.text)

            process = psutil.Process(sensor.process.pid)

            def cpu() -> float:
                times = process.cpu_times()
                return times.user + times.system

            before = cpu()
            await asyncio.sleep(cost_seconds)
            idle_per_hour = (cpu() - before) * 3600 / cost_seconds

            before = cpu()
            deadline = time.monotonic() + cost_seconds
            n = 0
            while time.monotonic() < deadline:
                await _activate(windows[n % 2].window_id, xenv)
                n += 1
                await asyncio.sleep(max(0.0, (n * 1.0) - (time.monotonic() - (deadline - cost_seconds))))
            busy_per_hour = (cpu() - before) * 3600 / cost_seconds
            rss_mb = process.memory_info().rss / 1e6
        except BaseException:
            print(sensor.output[-3000:])
            raise
        finally:
            await bus.close()
            for window in windows:
                window.close()
            sensor.terminate()
    save(
        "sensor_focus",
        {
            "machine": machine(),
            "focus_change_end_to_end": summary_ms(latencies),
            "focus_change_inside_sensor_histogram": inside,
            "sensor_cpu_seconds_per_hour": {
                "idle": round(idle_per_hour, 1),
                "switches_per_minute_60": round(busy_per_hour, 1),
                "switches_done": n,
                "window_seconds": cost_seconds,
            },
            "sensor_rss_mb": round(rss_mb, 1),
        },
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--switches", type=int, default=200)
    parser.add_argument("--cost-seconds", type=float, default=60.0)
    args = parser.parse_args()
    print(
        f"sensor_focus: {args.switches} switches, then {args.cost_seconds:.0f} s idle and {args.cost_seconds:.0f} s busy"
    )
    asyncio.run(run(args.switches, args.cost_seconds))


if __name__ == "__main__":
    main()
