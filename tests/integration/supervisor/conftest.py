"""A supervisor process on the service runtime against real NATS, Redis, PostgreSQL and a private
tmux server, with the fake Codex on its PATH and short collision and reconcile settings."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest
from kronii.supervisor.core.tokens import issue_token

from tests.agents.harness import FAKE_CODEX, CodexBin, codex_bin, private_socket, read_jsonl
from tests.infra import InfraUrls
from tests.mesh import Proc, start_service

SECRET = "kronii-test-secret-0123456789abcdef"
SETTINGS = {
    "KRONII_SUPERVISOR_QUIET_WINDOW_SECS": "1.5",
    "KRONII_SUPERVISOR_RECHECK_SECS": "0.3",
    "KRONII_SUPERVISOR_MAX_DEFER_SECS": "4",
    "KRONII_SUPERVISOR_RECONCILE_INTERVAL_SECS": "0.2",
    "KRONII_SUPERVISOR_COOLDOWN_FAILURES": "0",
    # "hasty" is Codex without its pause before Enter: its prompts land inside the paste window.
    "KRONII_SUPERVISOR_AGENT_KINDS": json.dumps(
        {
            "hasty": {"submit_pause_secs": 0, "input_marker": "\u203a", "resume_argv": [], "spawn_argv": []},
            # Like Claude Code started offline: the spawned agent dies after a second.
            "quitter": {
                "input_marker": "\u203a",
                "resume_argv": [],
                "spawn_argv": ["sh", "-c", "sleep 1; exit 3"],
            },
        }
    ),
}


def token(
    subject: str = "orchestrator",
    workspaces: tuple[str, ...] = ("*",),
    scopes: tuple[str, ...] = ("trigger", "operate", "read"),
) -> str:
    return issue_token(
        SECRET.encode(),
        subject=subject,
        scopes=set(scopes),
        workspaces=set(workspaces),
        now=time.time(),
        ttl_secs=3600,
    )


@dataclass
class Supervisor:
    proc: Proc
    url: str
    grpc_port: int
    socket: str
    codex: CodexBin
    folder: Path
    database: str
    nats: str

    def client(self, bearer: str | None = None) -> httpx.Client:
        headers = {"authorization": f"Bearer {bearer or token()}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)

    def spawn(
        self,
        agent: str,
        *,
        kind: str = "codex",
        workspace: str = "ws1",
        session_id: str = "",
        command: list[str] | None = None,
        role: str = "",
        cwd: str = "",
    ) -> dict[str, Any]:
        argv = command or [sys.executable, str(FAKE_CODEX)]
        with self.client() as http:
            response = http.post(
                "/v1/runtimes/spawn",
                json={"workspace_id": workspace, "agent_id": agent, "kind": kind, "command": argv,
                      "session_id": session_id, "role": role or agent, "cwd": cwd},
            )  # fmt: skip
        assert response.status_code == 201, response.text
        body: dict[str, Any] = response.json()
        return body

    def trigger(
        self, agent: str, prompt: str, *, workspace: str = "ws1", thread: str = "", **extra: Any
    ) -> dict[str, Any]:
        body = {"trigger_id": f"t-{uuid.uuid4().hex[:10]}", "agent_id": agent, "workspace_id": workspace,
                "thread_id": thread or f"th-{uuid.uuid4().hex[:8]}", "prompt": prompt, **extra}  # fmt: skip
        with self.client() as http:
            response = http.post("/v1/triggers", json=body)
        assert response.status_code == 200, (response.text, self.proc.output[-4000:])
        out: dict[str, Any] = response.json()
        return out

    def get_trigger(self, trigger_id: str) -> dict[str, Any]:
        with self.client() as http:
            out: dict[str, Any] = http.get(f"/v1/triggers/{trigger_id}").json()
        return out

    def metrics(self) -> str:
        return httpx.get(f"{self.url}/metrics").text

    def launches(self) -> list[dict[str, Any]]:
        return read_jsonl(self.codex.argv_log)


def eventually(check: Callable[[], Any], timeout: float, what: str) -> Any:
    """What `check` answers once it is truthy, polled every 0.1 s; AssertionError naming `what` after
    `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def wait_ready_pane(sup: Supervisor, runtime_id: str, marker: str = "\u203a") -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with sup.client() as http:
            lines = http.get(f"/v1/runtimes/{runtime_id}/logs", params={"lines": 50}).json().get("lines", [])
        if any(line.startswith(marker) for line in lines):
            return
        time.sleep(0.05)
    raise AssertionError(f"runtime {runtime_id} never showed {marker!r}")


_REDIS_DBS = itertools.count()


def _flush(url: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    try:
        client.flushdb()
    finally:
        client.close()


def _redis_db(url: str, db: int) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{db}"))


@contextlib.contextmanager
def start_supervisor(
    infra: InfraUrls, database: str, folder: Path, socket: str, *, settings: dict[str, str] | None = None,
    extra_env: dict[str, str] | None = None, ports: tuple[int, int] | None = None, redis_db: int = 0,
) -> Iterator[Supervisor]:  # fmt: skip
    """A supervisor process on free ports (or `ports`, to restart one in place) with the fake Codex
    on its PATH; `settings` replaces the brisk SETTINGS (pass {} for the defaults)."""
    codex = codex_bin(folder)
    env = dict(os.environ)
    env.update(infra.env())
    # Each supervisor keeps its queue in a Redis database of its own: two running at once (as
    # module fixtures do) must not take each other's deferred triggers. A restart passes its own.
    env["KRONII_REDIS_URL"] = _redis_db(infra.redis, redis_db or 1 + next(_REDIS_DBS) % 14)
    if not redis_db:
        # A fresh supervisor starts with an empty queue: the databases are reused round-robin, and
        # an earlier module's supervisor may have left deferred triggers in this one.
        _flush(env["KRONII_REDIS_URL"])
    env.update(codex.env(FAKE_CODEX_RESUME_EXIT_FILE=str(folder / "resume_exit"),
                         FAKE_CODEX_RESUME_DELAY_FILE=str(folder / "resume_delay")))  # fmt: skip
    env.update(SETTINGS if settings is None else settings)
    env.update(
        KRONII_DATABASE_URL=database,
        KRONII_DATA_DIR=str(folder / "data"),
        KRONII_SUPERVISOR_TMUX_SOCKET=socket,
        KRONII_SUPERVISOR_TOKEN_SECRET=SECRET,
        KRONII_LOG_FORMAT="json",
    )
    if ports is not None:
        env.update(KRONII_SUPERVISOR_HTTP_PORT=str(ports[0]), KRONII_SUPERVISOR_GRPC_PORT=str(ports[1]))
    env.update(extra_env or {})
    with start_service("supervisor", env) as sup:
        yield Supervisor(sup.proc, sup.url, sup.grpc_port, socket, codex, folder, database, infra.nats)


@pytest.fixture(scope="module")
def supervisor(
    infra: InfraUrls, migrated_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Supervisor]:
    folder = tmp_path_factory.mktemp("supervisor")
    with private_socket() as socket, start_supervisor(infra, migrated_database, folder, socket) as sup:
        yield sup
