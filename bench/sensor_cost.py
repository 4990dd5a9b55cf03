"""The kronii sensor's CPU against ActivityWatch's watchers, in the same run on the same Xvfb.

Both run side by side on one Xvfb (openbox, two xterms): the kronii sensor (a service process on real
NATS, Redis and PostgreSQL) and ActivityWatch's aw-watcher-window and aw-watcher-afk with their
default settings, sending heartbeats to an aw-server of their own. Two phases of the same length:
idle (nobody touches anything), then busy (xdotool switches the focus between the xterms 60 times a
minute, seen by both). CPU seconds per hour of each process (its threads, and the children it waited
for), from psutil, over exactly the same seconds.

What is counted: "aw_watchers" is aw-watcher-window + aw-watcher-afk, the programs that do what the
kronii sensor does (focus and idle); aw-server, which stores their heartbeats as kronii's sensor does
in Redis and PostgreSQL, is reported beside them and in a second ratio. The kronii sensor's figure is
its whole service process (the service runtime's HTTP and gRPC servers, its PostgreSQL watch and its
audit outbox included), not NATS, Redis or PostgreSQL themselves.

ActivityWatch is not on PyPI: put aw-server and the two watchers in a virtualenv of their own and name
it in AW_VENV (its bin/ holds aw-server, aw-watcher-window, aw-watcher-afk). Without AW_VENV the
sensor alone is measured and the run says so.

Usage: python bench/sensor_cost.py [--seconds 60]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil
from _common import cpu_seconds, machine, save, scratch_folder
from kronii.launcher.infra import free_port
from kronii.stores.db import migrate_up

from tests.desktop import WindowHandle, open_window, start_session_bus, start_xvfb, stop_process
from tests.infra import start_test_infra
from tests.mesh import Proc, python_module, wait_http_ready

AW_PROGRAMS = ("aw-watcher-window", "aw-watcher-afk")


@dataclass
class ActivityWatch:
    server: subprocess.Popen[bytes]
    watchers: dict[str, subprocess.Popen[bytes]]

    def pids(self) -> dict[str, int]:
        return {"aw_server": self.server.pid, **{name: proc.pid for name, proc in self.watchers.items()}}

    def stop(self) -> None:
        for proc in [*self.watchers.values(), self.server]:
            stop_process(proc)


def _aw_env(display: str, home: Path) -> dict[str, str]:
    """The watchers' own config and data folders, so nothing of a real ActivityWatch is touched."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("XDG_")}
    env.update(
        DISPLAY=display,
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        XDG_CACHE_HOME=str(home / "cache"),
    )
    return env


def _spawn(program: Path, port: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [str(program), "--host", "127.0.0.1", "--port", port],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _wait_for_aw_server(url: str, server: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"aw-server exited with {server.returncode}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"aw-server did not answer {url} within {timeout:.0f} s")


def start_activitywatch(venv: Path, display: str, home: Path) -> ActivityWatch:
    env = _aw_env(display, home)
    port = str(free_port())
    server = _spawn(venv / "bin" / "aw-server", port, env)
    _wait_for_aw_server(f"http://127.0.0.1:{port}/api/0/info", server)
    watchers = {name.replace("-", "_"): _spawn(venv / "bin" / name, port, env) for name in AW_PROGRAMS}
    return ActivityWatch(server, watchers)


async def _activate(window_id: int, env: dict[str, str]) -> None:
    process = await asyncio.create_subprocess_exec("xdotool", "windowactivate", str(window_id), env=env)
    if await process.wait() != 0:
        raise RuntimeError(f"xdotool windowactivate {window_id} failed")


async def _switch_for(seconds: float, windows: list[WindowHandle], env: dict[str, str]) -> int:
    """Switch the focus once a second for `seconds`; how many switches were made."""
    start = time.monotonic()
    n = 0
    while time.monotonic() - start < seconds:
        await _activate(windows[n % 2].window_id, env)
        n += 1
        await asyncio.sleep(max(0.0, n - (time.monotonic() - start)))
    return n


def _per_hour(before: dict[str, float], after: dict[str, float], seconds: float) -> dict[str, float]:
    return {name: round((after[name] - before[name]) * 3600 / seconds, 1) for name in before}


def _cpu(pids: dict[str, int]) -> dict[str, float]:
    return {name: cpu_seconds(pid) for name, pid in pids.items()}


def _alive(pids: dict[str, int]) -> None:
    for name, pid in pids.items():
        if not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
            raise RuntimeError(f"{name} (pid {pid}) ended during the run")


def _figures(per_hour: dict[str, float], switches: int | None) -> dict[str, Any]:
    figures: dict[str, Any] = {"cpu_seconds_per_hour": per_hour}
    if switches is not None:
        figures["switches_done"] = switches
    if "aw_server" in per_hour:
        watchers = per_hour["aw_watcher_window"] + per_hour["aw_watcher_afk"]
        figures["aw_watchers_cpu_seconds_per_hour"] = round(watchers, 1)
        figures["ratio_sensor_to_aw_watchers"] = (
            round(per_hour["kronii_sensor"] / watchers, 2) if watchers else None
        )
        with_server = watchers + per_hour["aw_server"]
        figures["ratio_sensor_to_aw_watchers_and_server"] = (
            round(per_hour["kronii_sensor"] / with_server, 2) if with_server else None
        )
    return figures


async def measure(
    seconds: float, pids: dict[str, int], windows: list[WindowHandle], xenv: dict[str, str]
) -> dict[str, Any]:
    load_before = os.getloadavg()
    before = _cpu(pids)
    await asyncio.sleep(seconds)
    idle = _per_hour(before, _cpu(pids), seconds)
    before = _cpu(pids)
    switches = await _switch_for(seconds, windows, xenv)
    busy = _per_hour(before, _cpu(pids), seconds)
    _alive(pids)
    return {
        "window_seconds": seconds,
        "load_average_1m_before_and_after": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
        "idle": _figures(idle, None),
        "switches_per_minute_60": _figures(busy, switches),
    }


async def run(seconds: float) -> None:
    venv = os.environ.get("AW_VENV")
    if not venv:
        print(
            "sensor_cost: AW_VENV is not set: ActivityWatch's watchers are NOT measured, the sensor alone is"
        )
    scratch = scratch_folder("kronii-bench-sensor-cost-")
    with start_xvfb() as display, start_session_bus() as bus_address, start_test_infra() as infra:
        migrate_up(infra.database)
        http = free_port()
        env = dict(os.environ)
        env.update(infra.env())
        env.update(
            DISPLAY=display,
            DBUS_SESSION_BUS_ADDRESS=bus_address,
            KRONII_DATA_DIR=tempfile.mkdtemp(prefix="data-", dir=scratch),
            KRONII_SENSOR_HTTP_PORT=str(http),
            KRONII_SENSOR_GRPC_PORT=str(free_port()),
            KRONII_LOG_LEVEL="WARNING",
        )
        windows = [open_window(display, f"cost window {n}", f"KroniiCost{n}") for n in range(2)]
        sensor = Proc(python_module("kronii.sensor"), env)
        aw: ActivityWatch | None = None
        try:
            wait_http_ready(f"http://127.0.0.1:{http}", proc=sensor)
            pids = {"kronii_sensor": sensor.process.pid}
            if venv:
                aw = start_activitywatch(Path(venv), display, scratch / "aw")
                pids.update(aw.pids())
            await asyncio.sleep(10)  # everyone past start-up (imports, first heartbeats, buckets made)
            _alive(pids)
            figures = await measure(seconds, pids, windows, {**os.environ, "DISPLAY": display})
        except BaseException:
            print(sensor.output[-3000:])
            raise
        finally:
            if aw is not None:
                aw.stop()
            sensor.terminate()
            for window in windows:
                window.close()
    save(
        "sensor_cost",
        {
            "machine": machine(),
            "activitywatch": "aw-server, aw-watcher-window, aw-watcher-afk from AW_VENV"
            if venv
            else "not measured: AW_VENV unset",
            **figures,
        },
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=60.0, help="length of each phase (idle, busy)")
    args = parser.parse_args()
    print(f"sensor_cost: {args.seconds:.0f} s idle, then {args.seconds:.0f} s at 60 switches a minute")
    asyncio.run(run(args.seconds))


if __name__ == "__main__":
    main()
