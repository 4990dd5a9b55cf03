"""Focus-change latency on Wayland (a headless sway, two foot windows) against X11 (Xvfb with openbox, two
xterms), in the same run, with the same infrastructure and the same sensor: from the moment the switch
command is started (`swaymsg [app_id=...] focus`; `xdotool windowactivate`) to the FocusChanged event
arriving at a NATS subscriber. Also the sensor's CPU per hour while nothing happens, on each.

ActivityWatch's Wayland watcher (aw-watcher-window-wayland) is a Rust program on neither PyPI nor Debian,
so it is not measured here.

Usage: python bench/sensor_focus_wayland.py [--switches 200] [--idle-seconds 30]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

import psutil
from _common import machine, save, summary_ms
from google.protobuf.message import Message
from kronii.activity.v1 import activity_pb2 as pb
from kronii.launcher.infra import free_port
from kronii.stores import subjects
from kronii.stores.bus import Bus
from kronii.stores.db import migrate_up

from tests.desktop import open_window, start_xvfb
from tests.infra import InfraUrls, start_test_infra
from tests.mesh import Proc, python_module, wait_http_ready
from tests.wayland import WaylandClient, start_sway

Switch = Callable[[int], Coroutine[Any, Any, None]]  # focus window n (0 or 1)


async def _run(*argv: str, env: dict[str, str]) -> None:
    process = await asyncio.create_subprocess_exec(
        *argv, env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    if await process.wait() != 0:
        raise RuntimeError(f"{argv[0]} failed")


def _sensor(infra: InfraUrls, session_env: dict[str, str]) -> tuple[Proc, int]:
    http = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.update(session_env)
    env.update(infra.env())
    env.update(
        KRONII_DATA_DIR=tempfile.mkdtemp(prefix="kronii-bench-"),
        KRONII_SENSOR_HTTP_PORT=str(http),
        KRONII_SENSOR_GRPC_PORT=str(free_port()),
        KRONII_LOG_LEVEL="WARNING",
        DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent/kronii-bench-bus",
        DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent/kronii-bench-bus",
    )
    sensor = Proc(python_module("kronii.sensor"), env)
    wait_http_ready(f"http://127.0.0.1:{http}", proc=sensor)
    return sensor, http


async def _latencies(nats_url: str, switch: Switch, apps: Sequence[str], switches: int) -> list[float]:
    bus = Bus("bench")
    await bus.connect(nats_url)
    arrivals: asyncio.Queue[tuple[float, Message]] = asyncio.Queue()

    async def on_focus(subject: str, message: pb.FocusChanged) -> None:
        await arrivals.put((time.perf_counter(), message))

    await bus.subscribe(subjects.FOCUS_CHANGED, on_focus)
    await bus.client.flush()
    latencies: list[float] = []
    try:
        for n in range(switches + 1):
            while not arrivals.empty():
                arrivals.get_nowait()
            started = time.perf_counter()
            switching = asyncio.create_task(switch(n % 2))
            while True:
                arrived, message = await asyncio.wait_for(arrivals.get(), 5)
                assert isinstance(message, pb.FocusChanged)
                if message.current.app_name == apps[n % 2]:
                    if n:  # the first switch only puts the focus on a known window
                        latencies.append(arrived - started)
                    break
            await switching
    finally:
        await bus.close()
    return latencies


async def _idle_cpu_per_hour(pid: int, seconds: float) -> float:
    process = psutil.Process(pid)
    before = sum(process.cpu_times()[:2])
    await asyncio.sleep(seconds)
    return (sum(process.cpu_times()[:2]) - before) * 3600 / seconds


async def _on_x11(infra: InfraUrls, switches: int, idle_s: float) -> dict[str, object]:
    with start_xvfb() as display:
        windows = [open_window(display, f"bench window {n}", f"KroniiBench{n}") for n in range(2)]
        env = {**os.environ, "DISPLAY": display}
        sensor, _ = _sensor(infra, {"DISPLAY": display})
        try:

            async def switch(n: int) -> None:
                await _run("xdotool", "windowactivate", str(windows[n].window_id), env=env)

            latencies = await _latencies(infra.nats, switch, ["KroniiBench0", "KroniiBench1"], switches)
            idle = await _idle_cpu_per_hour(sensor.process.pid, idle_s)
        finally:
            sensor.terminate()
            for window in windows:
                window.close()
    return {"switch_to_focus_changed": summary_ms(latencies), "idle_cpu_s_per_hour": round(idle, 2)}


async def _on_sway(infra: InfraUrls, switches: int, idle_s: float) -> dict[str, object]:
    with start_sway() as sway:
        apps = ["bench-a", "bench-b"]
        for app in apps:
            sway.open(WaylandClient("foot", ("foot", "--app-id", app), app))
        sensor, _ = _sensor(infra, sway.env())
        env = sway.env()
        try:

            async def switch(n: int) -> None:
                await _run("swaymsg", "-s", str(sway.ipc), f'[app_id="^{apps[n]}$"] focus', env=env)

            latencies = await _latencies(infra.nats, switch, apps, switches)
            idle = await _idle_cpu_per_hour(sensor.process.pid, idle_s)
        finally:
            sensor.terminate()
    return {"switch_to_focus_changed": summary_ms(latencies), "idle_cpu_s_per_hour": round(idle, 2)}


async def run(switches: int, idle_s: float) -> None:
    with start_test_infra() as infra:
        migrate_up(infra.database)
        x11 = await _on_x11(infra, switches, idle_s)
        sway = await _on_sway(infra, switches, idle_s)
    x_p95 = x11["switch_to_focus_changed"]["p95_ms"]  # type: ignore[index]
    sway_p95 = sway["switch_to_focus_changed"]["p95_ms"]  # type: ignore[index]
    result = {
        "machine": machine(),
        "x11_xvfb_openbox_xterm": x11,
        "wayland_sway_foot": sway,
        "p95_ratio_sway_over_x11": round(sway_p95 / x_p95, 2),
        "target": "sway p95 within 1.5x of X11",
        "aw_watcher_window_wayland": "not measured: a Rust program on neither PyPI nor Debian",
    }
    print(result)
    save("sensor_focus_wayland", result)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--switches", type=int, default=200)
    parser.add_argument("--idle-seconds", type=float, default=30.0)
    args = parser.parse_args()
    asyncio.run(run(args.switches, args.idle_seconds))


if __name__ == "__main__":
    main()
