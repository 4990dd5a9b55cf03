"""Scheduler processes on the service runtime against the test run's real NATS, Redis and
PostgreSQL. Each fixture or test gets its own Redis key prefix, so their timers never mix."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from kronii.common.infra import free_port

from tests.infra import InfraUrls
from tests.mesh import Proc, python_module, wait_http_ready

# Short enough that the safety net is seen within a test, long enough not to crowd planned Ticks.
FIXTURE_SETTINGS = {
    "KRONII_SCHEDULER_POLL_INTERVAL_SECS": "0.05",
    "KRONII_SCHEDULER_SAFETY_NET_INTERVAL_SECS": "2",
    "KRONII_SCHEDULER_GLOBAL_RUNS_PER_HOUR": "1000",
    "KRONII_SCHEDULER_APP_RUNS_PER_HOUR": "3",
}


@dataclass
class Scheduler:
    proc: Proc
    url: str
    grpc_port: int
    prefix: str

    def get_schedule(self) -> dict[str, Any]:
        response = httpx.get(f"{self.url}/v1/schedule", timeout=10)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    def post(self, path: str, body: object) -> httpx.Response:
        return httpx.post(f"{self.url}{path}", json=body, timeout=10)

    def plan(self, **body: Any) -> dict[str, Any]:
        response = self.post("/v1/plans", body)
        assert response.status_code == 200, response.text
        out: dict[str, Any] = response.json()
        return out

    def admit(self, **body: Any) -> dict[str, Any]:
        response = self.post("/v1/admit", body)
        assert response.status_code == 200, response.text
        out: dict[str, Any] = response.json()
        return out

    def metrics(self) -> str:
        return httpx.get(f"{self.url}/metrics", timeout=10).text


def start_scheduler(infra: InfraUrls, database: str, prefix: str, **settings: str) -> Scheduler:
    """Start `python -m kronii.scheduler` and wait until /readyz answers 200."""
    http_port, grpc_port = free_port(), free_port()
    env = dict(os.environ)
    env.update(infra.env())
    env.update(
        KRONII_DATABASE_URL=database,
        KRONII_SCHEDULER_HTTP_PORT=str(http_port),
        KRONII_SCHEDULER_GRPC_PORT=str(grpc_port),
        KRONII_SCHEDULER_KEY_PREFIX=prefix,
        KRONII_LOG_FORMAT="json",
        **settings,
    )
    proc = Proc(python_module("kronii.scheduler"), env)
    url = f"http://127.0.0.1:{http_port}"
    try:
        wait_http_ready(url, proc=proc)
    except BaseException:
        proc.kill()
        raise
    return Scheduler(proc, url, grpc_port, prefix)


def new_prefix(name: str) -> str:
    return f"kronii-test:{name}:{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def scheduler(infra: InfraUrls, migrated_database: str) -> Iterator[Scheduler]:
    running = start_scheduler(infra, migrated_database, new_prefix("scheduler"), **FIXTURE_SETTINGS)
    try:
        yield running
    finally:
        if running.proc.process.poll() is None:
            running.proc.terminate()
