"""Scheduler processes on the service runtime against the test run's real NATS, Redis and
PostgreSQL. Each fixture or test gets its own Redis key prefix, so their timers never mix."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.infra import InfraUrls
from tests.mesh import Proc, start_service

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


@contextlib.contextmanager
def start_scheduler(infra: InfraUrls, database: str, prefix: str, **settings: str) -> Iterator[Scheduler]:
    """`python -m kronii.scheduler` on free ports, ready (/readyz 200); stopped when the block ends."""
    env = dict(os.environ)
    env.update(infra.env())
    env.update(
        KRONII_DATABASE_URL=database,
        KRONII_SCHEDULER_KEY_PREFIX=prefix,
        KRONII_LOG_FORMAT="json",
        **settings,
    )
    with start_service("scheduler", env) as service:
        yield Scheduler(service.proc, service.url, service.grpc_port, prefix)


def new_prefix(name: str) -> str:
    return f"kronii-test:{name}:{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def scheduler(infra: InfraUrls, migrated_database: str) -> Iterator[Scheduler]:
    with start_scheduler(infra, migrated_database, new_prefix("scheduler"), **FIXTURE_SETTINGS) as running:
        yield running
