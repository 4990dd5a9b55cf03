"""The data dir on a small, full file system: a real Redis (the embedded one `kronii up` starts) keeps
its append-only file on a 4 MB tmpfs that fills up, so it refuses writes with MISCONF for real. The
pipeline's triggers, the supervisor's triggers and capture's requests (HTTP and gRPC) are answered
503 with Retry-After and a sentence (gRPC UNAVAILABLE), never 500 / INTERNAL; the pipeline takes no
trigger while its /readyz says 503; once there is room again they are taken again, and every request
that was answered 2xx is in the store afterwards.

Mounting needs root: elsewhere the test is skipped and says why (the same rule is proven in process
by tests/unit/common/test_write_refusals.py)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import grpc
import httpx
import psycopg
import pytest
import redis
from kronii.capture.core.capabilities import Capability
from kronii.capture.v1 import capture_pb2 as cpb
from kronii.capture.v1 import capture_pb2_grpc as cpb_grpc
from kronii.foundation.urls import libpq_url
from kronii.launcher.infra import EmbeddedInfra, InfraPorts, free_port
from kronii.stores.db import migrate_up

from tests.agents.harness import private_socket
from tests.desktop import start_xvfb
from tests.infra import InfraUrls, create_database
from tests.integration.capture.capture_support import (
    CaptureProc,
    PlantedWindow,
    agent_bearer,
    capture_env,
    planted_window,
    start_capture,
)
from tests.integration.pipeline.pipeline_support import Pipeline, pipeline_env, start_pipeline
from tests.integration.supervisor.conftest import Supervisor, start_supervisor, wait_ready_pane
from tests.mesh import wait_until

TMPFS_SIZE = "4m"


@contextlib.contextmanager
def small_tmpfs(path: Path) -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs for the data dir needs root (mount -t tmpfs); not root here")
    path.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE},mode=0700", "tmpfs", str(path)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a {TMPFS_SIZE} tmpfs here: {mounted.stderr.strip() or mounted.returncode}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def _answers_ready(url: str) -> bool:
    return httpx.get(f"{url}/readyz", timeout=10).status_code == 200


@dataclass
class FullDisk:
    redis_dir: Path
    redis_url: str
    database: str
    pipeline: Pipeline
    supervisor: Supervisor
    capture: CaptureProc
    window: PlantedWindow
    agent: str
    bearer: tuple[tuple[str, str], ...]
    # Every answer: (path, status or gRPC code, the sentence, Retry-After).
    answers: list[tuple[str, str, str, str]] = field(default_factory=list)

    def fill(self) -> None:
        """Fill the file system, then have Redis write (as any of the mesh's writers would)."""
        with contextlib.suppress(OSError), open(self.redis_dir / "filler", "wb") as handle:
            while True:
                handle.write(b"\0" * 65536)
                handle.flush()
        client = redis.Redis.from_url(self.redis_url)
        with contextlib.suppress(redis.exceptions.ResponseError):
            client.set("kronii:test:ballast", b"b" * 65536)
        wait_until(lambda: not _pings(client), 10, "Redis refusing writes (MISCONF)")

    def free(self) -> None:
        (self.redis_dir / "filler").unlink()
        client = redis.Redis.from_url(self.redis_url)
        # Redis tries its append-only file again every second.
        wait_until(lambda: _pings(client), 15, "Redis writing again once there is room")

    def pipeline_trigger(self) -> httpx.Response:
        response = httpx.post(
            f"{self.pipeline.url}/v1/triggers", json={"kind": "manual", "source": "cli"}, timeout=30
        )
        self._note("pipeline", response)
        return response

    def supervisor_trigger(self, trigger_id: str) -> httpx.Response:
        body = {"trigger_id": trigger_id, "agent_id": self.agent, "workspace_id": "ws1",
                "thread_id": f"th-{trigger_id}", "prompt": f"say hello {trigger_id}"}  # fmt: skip
        with self.supervisor.client() as http:
            response = http.post("/v1/triggers", json=body)
        self._note("supervisor", response)
        return response

    def capture_http(self) -> httpx.Response:
        body = {"process_id": self.window.process.pid, "window_id": self.window.window_id}
        headers = dict(self.bearer)
        response = httpx.post(
            f"{self.capture.http}/v1/capture/requests", json=body, headers=headers, timeout=30
        )
        self._note("capture http", response)
        return response

    def capture_grpc(self) -> str:
        """The job id, or "" when refused."""

        async def call() -> str:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{self.capture.grpc_port}") as channel:
                stub = cpb_grpc.ScreenCaptureStub(channel)
                request = cpb.CaptureRequest(
                    process_id=self.window.process.pid, window_id=self.window.window_id
                )
                try:
                    answer = await stub.RequestScreenCapture(request, metadata=self.bearer, timeout=30)
                except grpc.aio.AioRpcError as error:
                    retry = dict(error.trailing_metadata() or ()).get("retry-after", "")
                    self.answers.append(
                        ("capture grpc", error.code().name, error.details() or "", str(retry))
                    )
                    return ""
                self.answers.append(("capture grpc", "OK", "", ""))
                return str(answer.job_id)

        return asyncio.run(call())

    def _note(self, where: str, response: httpx.Response) -> None:
        detail = response.json().get("detail", "") if response.status_code >= 400 else ""
        self.answers.append(
            (where, str(response.status_code), str(detail), response.headers.get("retry-after", ""))
        )


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.exceptions.ResponseError:
        return False


def _in_parallel(starts: dict[str, Callable[[], Any]]) -> dict[str, Any]:
    """Each service started on a thread of its own (each takes seconds), its stop kept in its stack."""
    started: dict[str, Any] = {}
    failures: list[BaseException] = []

    def start(name: str) -> None:
        try:
            started[name] = starts[name]()
        except BaseException as error:  # raised below, on the test's thread
            failures.append(error)

    threads = [threading.Thread(target=start, args=(name,)) for name in starts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return started


@pytest.fixture(scope="module")
def full_disk(infra: InfraUrls, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FullDisk]:
    folder = tmp_path_factory.mktemp("full-disk")
    data = folder / "infra"
    with contextlib.ExitStack() as stack:
        redis_dir = stack.enter_context(small_tmpfs(data / "redis"))
        own = EmbeddedInfra(data, InfraPorts(free_port(), free_port(), free_port()))
        servers = own.start(nats_url=None, redis_url=None, database_url=infra.database)
        stack.callback(own.stop)
        urls = InfraUrls(servers["nats"].url, servers["redis"].url, infra.database)
        database = create_database(infra.database, f"kronii_full_{uuid.uuid4().hex[:6]}")
        migrate_up(database)
        stacks = {
            name: stack.enter_context(contextlib.ExitStack())
            for name in ("pipeline", "supervisor", "capture")
        }

        def capture() -> tuple[CaptureProc, PlantedWindow]:
            display = stacks["capture"].enter_context(start_xvfb())
            window = stacks["capture"].enter_context(planted_window(display, "a full disk"))
            env = {
                **capture_env(urls, database, folder / "capture", display),
                "KRONII_CAPTURE_MERGE_WINDOW_MS": "0",
            }
            env.update(KRONII_CAPTURE_GLOBAL_PER_MINUTE="600", KRONII_CAPTURE_PER_APP_PER_MINUTE="600")
            return stacks["capture"].enter_context(start_capture(env)), window

        def supervisor() -> Supervisor:
            socket = stacks["supervisor"].enter_context(private_socket())
            return stacks["supervisor"].enter_context(
                start_supervisor(urls, database, folder / "supervisor", socket)
            )

        started = _in_parallel(
            {
                "pipeline": lambda: stacks["pipeline"].enter_context(
                    start_pipeline(pipeline_env(urls, database, folder / "pipeline"))
                ),
                "supervisor": supervisor,
                "capture": capture,
            },
        )
        (capture_proc, window), sup = started["capture"], started["supervisor"]
        target = f"127.0.0.1:{capture_proc.grpc_port}"
        bearer = asyncio.run(agent_bearer(target, urls.redis, database, Capability.REQUEST_CAPTURE))
        agent = f"full-{uuid.uuid4().hex[:6]}"
        runtime = sup.spawn(agent, session_id="s-full")["runtime"]
        wait_ready_pane(sup, runtime["runtime_id"])
        try:
            yield FullDisk(
                redis_dir, urls.redis, database, started["pipeline"], sup, capture_proc, window, agent, bearer
            )
        finally:  # each takes a second or more to stop: all at once
            _in_parallel({name: each.close for name, each in stacks.items()})


def test_a_full_data_disk_is_answered_503_with_retry_after_and_nothing_acknowledged_is_lost(
    full_disk: FullDisk,
) -> None:
    disk = full_disk
    acked_triggers: list[str] = []
    acked_jobs: list[str] = []

    def supervisor_round(label: str) -> None:
        trigger_id = f"t-{label}-{uuid.uuid4().hex[:8]}"
        if disk.supervisor_trigger(trigger_id).is_success:
            acked_triggers.append(trigger_id)

    def capture_round() -> None:
        answer = disk.capture_http()
        if answer.is_success:
            acked_jobs.append(answer.json()["job_id"])
        job = disk.capture_grpc()
        if job:
            acked_jobs.append(job)

    # Room on the disk: each write path takes its request.
    assert disk.pipeline_trigger().status_code == 202
    supervisor_round("before")
    capture_round()
    assert len(acked_triggers) == 1 and len(acked_jobs) == 2, disk.answers

    disk.fill()
    wait_until(
        lambda: httpx.get(f"{disk.pipeline.url}/readyz", timeout=10).status_code == 503,
        10,
        "the pipeline's /readyz saying 503",
    )
    during = len(disk.answers)
    for round_ in range(5):
        disk.pipeline_trigger()
        supervisor_round(f"full{round_}")
        capture_round()
    full = disk.answers[during:]
    pipeline_answers = [status for where, status, *_ in full if where == "pipeline"]
    assert pipeline_answers == ["503"] * 5, f"a trigger taken while /readyz says 503: {full}"
    for where, status, sentence, retry in full:
        assert status in ("503", "UNAVAILABLE"), f"{where} answered {status} on a full disk: {sentence}"
        assert int(retry) >= 1, f"{where}: {status} without Retry-After"
        assert len(sentence.split()) >= 4, f"{where}: not a sentence: {sentence!r}"

    disk.free()
    for name, url in (("pipeline", disk.pipeline.url), ("capture", disk.capture.http)):
        # Each service sees Redis back at its own next probe.
        wait_until(partial(_answers_ready, url), 15, f"the {name} ready again")
    assert disk.pipeline_trigger().status_code == 202
    supervisor_round("after")
    capture_round()
    assert len(acked_triggers) == 2 and len(acked_jobs) == 4, disk.answers[-4:]

    # Nothing acknowledged is lost: each trigger has its row, each job is known to capture.
    with psycopg.connect(libpq_url(disk.database)) as conn:
        stored = {
            row[0]
            for row in conn.execute(
                "SELECT trigger_id FROM supervisor_triggers WHERE trigger_id = ANY(%s)", (acked_triggers,)
            )
        }
    assert stored == set(acked_triggers)
    for job_id in acked_jobs:
        answer = httpx.get(
            f"{disk.capture.http}/v1/capture/jobs/{job_id}", headers=dict(disk.bearer), timeout=30
        )
        assert answer.status_code == 200, (job_id, answer.text)
    assert not any(status.startswith("5") and status != "503" for _, status, *_ in disk.answers)
    assert "INTERNAL" not in {status for _, status, *_ in disk.answers}
