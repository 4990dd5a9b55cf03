"""Start `python -m kronii.pipeline` as a real process against the test run's NATS, Redis and
PostgreSQL, and talk to it over HTTP, SSE and NATS."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from kronii.launcher.infra import free_port
from kronii.stores.db import migrate_up

from tests.infra import InfraUrls, create_database
from tests.mesh import Proc, start_service, wait_until

IDE_TITLE = "machine.py - kronii - Visual Studio Code"


@dataclass
class Pipeline:
    proc: Proc
    url: str
    env: dict[str, str]

    def trigger(self, **body: Any) -> httpx.Response:
        return httpx.post(f"{self.url}/v1/triggers", json=body, timeout=10)

    def get(self, path: str) -> Any:
        response = httpx.get(f"{self.url}{path}", timeout=10)
        assert response.status_code == 200, response.text
        return response.json()

    def runs(self) -> list[dict[str, Any]]:
        runs: list[dict[str, Any]] = self.get("/v1/runs?limit=500")["runs"]
        return runs

    def finished_runs(self) -> list[dict[str, Any]]:
        return [run for run in self.runs() if run["finished_at"] is not None]

    def wait_for_run(
        self, predicate: Any, timeout: float = 20.0, what: str = "a finished run"
    ) -> dict[str, Any]:
        found: list[dict[str, Any]] = []

        def check() -> bool:
            found[:] = [run for run in self.finished_runs() if predicate(run)]
            return bool(found)

        wait_until(check, timeout, what, interval=0.1)
        return found[0]


def pipeline_database(infra: InfraUrls, name: str) -> str:
    database = create_database(infra.database, f"kronii_pl_{name}_{uuid.uuid4().hex[:6]}")
    migrate_up(database)
    return database


def pipeline_env(infra: InfraUrls, database: str, data_dir: Path, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRONII_") and k not in ("DISPLAY",)}
    env.update(infra.env())
    env.update(
        KRONII_DATABASE_URL=database,
        KRONII_DATA_DIR=str(data_dir),
        KRONII_LOG_FORMAT="json",
        KRONII_LOG_LEVEL="DEBUG",
        KRONII_PIPELINE_HTTP_PORT=str(free_port()),
        KRONII_PIPELINE_GRPC_PORT=str(free_port()),
        KRONII_PIPELINE_CAPTURE_ENABLED="false",
        KRONII_PIPELINE_TMUX_PLUGIN="false",
        KRONII_PIPELINE_DESKTOP_NOTIFICATIONS="false",
        KRONII_PIPELINE_RUNS_GLOBAL_PER_HOUR="1000",
        KRONII_PIPELINE_RUNS_PER_APP_PER_HOUR="1000",
        KRONII_PIPELINE_MAX_COOLDOWN_SECS="0.5",
        KRONII_PIPELINE_SCHEDULER_ADMIT_TIMEOUT_SECS="0.2",
        DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
        DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
    )
    env.update(settings)
    return env


@contextlib.contextmanager
def start_pipeline(env: dict[str, str]) -> Iterator[Pipeline]:
    with start_service("pipeline", env, timeout=60) as pipeline:
        yield Pipeline(pipeline.proc, pipeline.url, env)


@dataclass
class SseReader:
    """Reads GET /v1/notifications/stream on a thread; `events` are the decoded data lines."""

    url: str
    raw: list[str] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> SseReader:
        opened = threading.Event()

        def read() -> None:
            with httpx.stream(
                "GET", f"{self.url}/v1/notifications/stream", timeout=httpx.Timeout(10.0, read=None)
            ) as response:
                opened.set()
                for line in response.iter_lines():
                    self.raw.append(line)
                    if line.startswith("data: "):
                        self.events.append(json.loads(line[6:]))
                    if self._stop.is_set():
                        return

        self._thread = threading.Thread(target=read, daemon=True)
        self._thread.start()
        assert opened.wait(10), "the SSE stream did not open"
        time.sleep(0.2)
        return self
