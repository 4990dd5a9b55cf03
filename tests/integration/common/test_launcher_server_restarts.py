"""`kronii up` brings a killed embedded server back by itself: NATS, Redis and the PostgreSQL postmaster
each die by SIGKILL in turn and come back on the same data, port and credentials; `kronii status` shows
the outage, the services answer /readyz again and real work goes through each server afterwards. A
server that keeps dying stops kronii with a sentence naming it."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from kronii.foundation.urls import libpq_url
from kronii.scheduler.v1 import scheduler_pb2 as spb
from kronii.stores import subjects
from kronii.stores.bus import Bus
from kronii.stores.subjects import Topic
from nats.js.api import ConsumerConfig, DeliverPolicy

from tests.mesh import Proc, kronii_process_pids, standalone_env, wait_http_ready, wait_until

KRONII = str(Path(sys.executable).parent / "kronii")
# A subject of this test alone: no service subscribes to it.
_RESTART_TEST = Topic("kronii.test.restart", spb.Plan)


class KroniiUp:
    """A running `kronii up` of its own, with the URLs of its embedded servers (read from its data)."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.env = {**standalone_env(data_dir), "KRONII_TEST_FAST_PG": "1"}
        self.proc = Proc([KRONII, "up"], self.env)

    def secret(self, name: str) -> str:
        return (self.data_dir / "secrets" / name).read_text().strip()

    @property
    def nats_url(self) -> str:
        return f"nats://{self.secret('nats_token')}@127.0.0.1:{self.env['KRONII_EMBEDDED_NATS_PORT']}"

    @property
    def database_url(self) -> str:
        port = self.env["KRONII_EMBEDDED_POSTGRES_PORT"]
        return f"postgresql://kronii:{self.secret('postgres_password')}@127.0.0.1:{port}/kronii"

    def http(self, service: str) -> str:
        return f"http://127.0.0.1:{self.env[f'KRONII_{service.upper()}_HTTP_PORT']}"

    def state(self) -> dict[str, Any]:
        return dict(json.loads((self.data_dir / "run" / "up.json").read_text()))

    def kill_server(self, name: str) -> int:
        pid = int(self.state()["infra"][name]["pid"])
        os.kill(pid, signal.SIGKILL)
        return pid

    def status(self) -> subprocess.CompletedProcess[str]:
        return subprocess.run([KRONII, "status"], env=self.env, capture_output=True, text=True, timeout=60)

    def wait_back(self, name: str, killed: int, timeout: float = 30) -> None:
        self.proc.wait_for_line(lambda line: f"kronii: {name} is back after" in line, timeout)
        assert self.state()["infra"][name]["pid"] != killed
        assert self.proc.process.poll() is None

    def wait_all_ready(self, timeout: float = 60) -> str:
        """Every service answers /readyz 200 and `kronii status` exits 0; returns its table."""
        for service in ("sensor", "capture", "pipeline", "scheduler", "supervisor"):
            wait_http_ready(self.http(service), timeout=timeout, proc=self.proc)
        deadline = time.monotonic() + timeout
        while True:
            status = self.status()
            if status.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert status.returncode == 0, status.stdout + status.stderr
        return status.stdout


@pytest.fixture
def up(tmp_path: Path) -> Iterator[KroniiUp]:
    up = KroniiUp(tmp_path / "kronii-data")
    try:
        up.proc.wait_for_line(lambda line: line.strip() == "kronii is up", 120)
        yield up
    finally:
        if up.proc.process.poll() is None:
            up.proc.terminate(timeout=20)
        wait_until(lambda: not kronii_process_pids(str(up.data_dir)), 10, "kronii's processes to exit")


def _row(status: str, name: str) -> str:
    return next(line for line in status.splitlines() if line.startswith(f"{name} "))


def _post_plan(up: KroniiUp, app: str) -> str:
    run_id = f"run-{uuid.uuid4().hex[:12]}"
    body = {"run_id": run_id, "app": app, "wakeup_in_ms": 3_600_000, "reason": "restart test"}
    response = httpx.post(f"{up.http('scheduler')}/v1/plans", json=body, timeout=10)
    assert response.status_code == 200, response.text
    return run_id


def _pending_apps(up: KroniiUp) -> set[str]:
    view = httpx.get(f"{up.http('scheduler')}/v1/schedule", timeout=10).json()
    return {wakeup["app"] for wakeup in view["wakeups"]}


def _audited(up: KroniiUp, run_id: str) -> bool:
    with psycopg.connect(libpq_url(up.database_url), connect_timeout=3) as conn:
        row = conn.execute(
            "SELECT 1 FROM audit_log WHERE action = 'schedule.plan' AND actor = %s", (run_id,)
        ).fetchone()
    return row is not None


async def _nats_outage(up: KroniiUp) -> None:
    """A subscription and a durable JetStream consumer made before the kill still deliver after it,
    and the scheduler still takes plans from the bus."""
    listener, sender = Bus("restart-test"), Bus("restart-test")
    await listener.connect(up.nats_url)
    received: asyncio.Queue[str] = asyncio.Queue()

    async def on_plan(subject: str, plan: spb.Plan) -> None:
        await received.put(plan.run_id)

    await listener.subscribe(_RESTART_TEST, on_plan)
    js = listener.client.jetstream()
    durable, subject = f"restart-{uuid.uuid4().hex[:8]}", f"{subjects.ACTIVITY_PREFIX}.restart_test"
    config = ConsumerConfig(durable_name=durable, deliver_policy=DeliverPolicy.NEW, filter_subject=subject)
    await js.add_consumer(subjects.ACTIVITY_STREAM, config)
    # Acknowledged by JetStream, so stored: it must still be there for the consumer after the kill.
    await js.publish(subject, spb.Plan(run_id="before").SerializeToString())
    try:
        killed = up.kill_server("nats")
        up.proc.wait_for_line(lambda line: "embedded nats exited unexpectedly (signal 9)" in line, 10)
        await asyncio.to_thread(up.wait_back, "nats", killed)
        await sender.connect(up.nats_url)
        deadline = time.monotonic() + 15
        while not listener.connected and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert listener.connected, "the bus did not reconnect"

        await sender.publish(_RESTART_TEST, spb.Plan(run_id="after-nats"))
        assert await asyncio.wait_for(received.get(), 10) == "after-nats"

        await sender.publish(Topic(subject, spb.Plan), spb.Plan(run_id="after"))
        consumer = await js.pull_subscribe_bind(durable=durable, stream=subjects.ACTIVITY_STREAM)
        messages = [*await consumer.fetch(1, timeout=10), *await consumer.fetch(1, timeout=10)]
        assert [spb.Plan.FromString(message.data).run_id for message in messages] == ["before", "after"]

        await sender.publish(
            subjects.SCHEDULER_PLAN, spb.Plan(run_id="bus-plan", app="after-nats", wakeup_in_ms=3_600_000)
        )
        await asyncio.to_thread(
            wait_until,
            lambda: "after-nats" in _pending_apps(up),
            15,
            "the scheduler to take a plan from the bus",
        )
    finally:
        await listener.close()
        await sender.close()


def test_killed_embedded_servers_come_back_and_the_mesh_works_again(up: KroniiUp) -> None:
    up.wait_all_ready()

    asyncio.run(_nats_outage(up))
    status = up.wait_all_ready()
    assert "restarted 1 time, last down" in _row(status, "nats"), status

    killed = up.kill_server("redis")
    up.proc.wait_for_line(lambda line: "embedded redis exited unexpectedly (signal 9)" in line, 10)
    up.wait_back("redis", killed)
    status = up.wait_all_ready()
    assert "restarted 1 time, last down" in _row(status, "redis"), status
    # The plan taken before the kill was in the append-only file; a new one goes through Redis.
    assert "after-nats" in _pending_apps(up)
    _post_plan(up, "after-redis")
    assert {"after-nats", "after-redis"} <= _pending_apps(up)

    killed = up.kill_server("postgres")
    up.proc.wait_for_line(lambda line: "embedded postgres exited unexpectedly (signal 9)" in line, 10)
    up.wait_back("postgres", killed)
    status = up.wait_all_ready()
    assert "restarted 1 time, last down" in _row(status, "postgres"), status
    run_id = _post_plan(up, "after-postgres")
    wait_until(lambda: _audited(up, run_id), 15, "the plan's audit row in PostgreSQL")

    state = up.state()["infra"]
    for name in ("nats", "redis", "postgres"):
        assert state[name]["restarts"] == 1
        assert 0 < state[name]["outages"][0]["down_secs"] < 10
        assert state[name]["outages"][0]["reason"] == "signal 9"
    code, _ = up.proc.terminate(timeout=20)
    assert code == 0, up.proc.output[-3000:]


@pytest.mark.slow
def test_a_server_that_keeps_dying_stops_kronii_with_a_sentence_naming_it(up: KroniiUp) -> None:
    for _ in range(3):
        killed = up.kill_server("redis")
        up.wait_back("redis", killed)
    up.kill_server("redis")
    line = up.proc.wait_for_line(lambda line: "stopping kronii" in line, 15)
    assert line == "kronii: the embedded redis exited (signal 9) 4 times within 60 s; stopping kronii"
    assert up.proc.process.wait(20) == 1
