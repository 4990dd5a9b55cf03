"""Embedded servers under kill -9: `kronii up` (its own ports and data directory), then SIGKILL to
nats-server, redis-server and the PostgreSQL postmaster in turn, `--runs` times each. Per server: the
seconds from the kill to `kronii status` all ready again (every server and every service), median
and max; and, while each kill happens, scheduler plans (`POST /v1/plans`) flowing the whole time:
how many were answered 2xx against how many are durable afterwards (their wake-up in Redis and
their `schedule.plan` audit row in PostgreSQL).

Usage: python bench/chaos_servers.py [--runs 3] [--rate 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
from _common import machine, save

from tests.mesh import Proc, standalone_env

SERVERS = ("nats", "redis", "postgres")


@dataclass
class PlanFlow:
    """Plans sent at a steady rate on a thread; each remembers its run id and whether it got a 2xx."""

    scheduler: str
    rate: float
    answered: list[str] = field(default_factory=list)
    failed: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)

    def _run(self) -> None:
        with httpx.Client(timeout=5.0) as client:
            while not self._stop.wait(1 / self.rate):
                run_id = f"chaos-{uuid.uuid4().hex[:12]}"
                # One app per plan: a plan replaces its app's pending wake-up, and each must stay.
                body = {"run_id": run_id, "app": run_id, "wakeup_in_ms": 3_600_000, "reason": "chaos"}
                try:
                    response = client.post(f"{self.scheduler}/v1/plans", json=body)
                except httpx.HTTPError:
                    self.failed += 1
                    continue
                if 200 <= response.status_code < 300:
                    self.answered.append(run_id)
                else:
                    self.failed += 1


def durable_plans(scheduler: str, database_url: str, run_ids: list[str]) -> set[str]:
    """The hook: of `run_ids`, those whose wake-up is pending in the scheduler (Redis) and whose
    `schedule.plan` audit row is in PostgreSQL."""
    view = httpx.get(f"{scheduler}/v1/schedule", timeout=30).json()
    pending = {wakeup.get("run_id") for wakeup in view.get("wakeups", [])}
    with psycopg.connect(database_url, connect_timeout=5) as conn:
        rows = conn.execute(
            "SELECT actor FROM audit_log WHERE action = 'schedule.plan' AND actor = ANY(%s)", (run_ids,)
        ).fetchall()
    audited = {row[0] for row in rows}
    return {run_id for run_id in run_ids if run_id in pending and run_id in audited}


def all_ready() -> bool:
    from kronii.launcher.status import collect_status

    return all(row.ready for row in asyncio.run(collect_status()))


class Mesh:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.env = standalone_env(data_dir)
        # `kronii status` in this process reads the same settings as the command would.
        os.environ.update(self.env)
        self.proc = Proc([str(Path(sys.executable).parent / "kronii"), "up"], self.env)
        self.proc.wait_for_line(lambda line: line.strip() == "kronii is up", 180)

    def secret(self, name: str) -> str:
        return (self.data_dir / "secrets" / name).read_text().strip()

    @property
    def scheduler(self) -> str:
        return f"http://127.0.0.1:{self.env['KRONII_SCHEDULER_HTTP_PORT']}"

    @property
    def database_url(self) -> str:
        port = self.env["KRONII_EMBEDDED_POSTGRES_PORT"]
        return f"postgresql://kronii:{self.secret('postgres_password')}@127.0.0.1:{port}/kronii"

    def server_pid(self, name: str) -> int:
        state: dict[str, Any] = json.loads((self.data_dir / "run" / "up.json").read_text())
        return int(state["infra"][name]["pid"])


def _new_pid(mesh: Mesh, name: str, killed: int) -> bool:
    try:
        return mesh.server_pid(name) not in (killed, 0)
    except (OSError, ValueError, KeyError, TypeError):
        return False


def wait(predicate: Callable[[], bool], timeout: float, interval: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False


def one_kill(mesh: Mesh, name: str, rate: float) -> dict[str, Any]:
    flow = PlanFlow(mesh.scheduler, rate)
    flow.start()
    time.sleep(1.0)
    killed = mesh.server_pid(name)
    os.kill(killed, signal.SIGKILL)
    started = time.monotonic()
    # Recovered means: kronii up runs a new server process, and then every row of `kronii status` is
    # ready. (Waiting instead for a moment of "not ready" would count 5 s whenever the services ride
    # the outage out unseen, as they do for Redis, whose pool retries on a closed connection.)
    restarted = wait(lambda: _new_pid(mesh, name, killed), 60, 0.02)
    recovered = restarted and wait(all_ready, 60, 0.1)
    seconds = time.monotonic() - started
    time.sleep(1.0)
    flow.stop()
    time.sleep(1.0)  # the audit rows are written a moment after the answer
    durable = durable_plans(mesh.scheduler, mesh.database_url, flow.answered)
    return {
        "seconds_to_all_ready": round(seconds, 2) if recovered else None,
        "answered_2xx": len(flow.answered),
        "refused_or_failed": flow.failed,
        "durable": len(durable),
        "acknowledged_not_durable": len(flow.answered) - len(durable),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rate", type=float, default=20.0, help="plans per second during each kill")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="kronii-bench-chaos-"))
    mesh = Mesh(root / "data")
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in SERVERS}
    try:
        for run in range(args.runs):
            for name in SERVERS:
                result = one_kill(mesh, name, args.rate)
                results[name].append(result)
                print(f"run {run + 1} {name}: {result}", flush=True)
    finally:
        mesh.proc.terminate(30)
        shutil.rmtree(root, ignore_errors=True)
    figures: dict[str, Any] = {"machine": machine(), "runs": args.runs, "rate_per_s": args.rate}
    for name, items in results.items():
        seconds = [item["seconds_to_all_ready"] for item in items if item["seconds_to_all_ready"] is not None]
        figures[name] = {
            "median_s": round(statistics.median(seconds), 2) if seconds else None,
            "max_s": round(max(seconds), 2) if seconds else None,
            "not_recovered": len(items) - len(seconds),
            "answered_2xx": sum(item["answered_2xx"] for item in items),
            "refused_or_failed": sum(item["refused_or_failed"] for item in items),
            "durable": sum(item["durable"] for item in items),
            "acknowledged_not_durable": sum(item["acknowledged_not_durable"] for item in items),
        }
    save("chaos_servers", figures)


if __name__ == "__main__":
    main()
