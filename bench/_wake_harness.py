"""The pieces of bench/orchestrator_wakes.py: a supervisor (with its orchestrator, its default
settings) against embedded NATS, Redis and PostgreSQL and a private tmux server; line-reading agents
(bench/_wake_agent.py) spawned through it with the kind `generic`; and what the benchmark reads back:
the panes (tmux capture-pane), the threads (POST /v1/threads/read, peek + all), the metrics, and the
lines each agent read (its own log). Every process it starts is ended afterwards: the tmux server and
whatever still runs of the agents it held (their pids, and their children's)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import _common  # noqa: F401  (puts the repository root on sys.path, for `tests`)
import httpx
import psutil

HERE = Path(__file__).resolve().parent
AGENT = HERE / "_wake_agent.py"
SECRET = "kronii-bench-wakes-0123456789abcdef"  # noqa: S105 - the benchmark's own throwaway server
FINAL = {"delivered", "failed", "timeout", "typed_not_submitted", "refused"}


def epoch(value: Any) -> float:
    """A message's `at` as the JSON gives it (RFC 3339, or seconds) in seconds since the epoch."""
    if isinstance(value, int | float):
        return float(value)
    if not value:
        return 0.0
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()


@dataclass
class Agent:
    workspace: str
    name: str
    role: str
    log: Path
    runtime_id: str = ""
    partner: str = ""
    pane_id: str = ""

    @property
    def session(self) -> str:
        return f"agents_{self.workspace}"


@dataclass
class Harness:
    http: httpx.AsyncClient
    socket: str
    folder: Path
    supervisor: psutil.Process
    pane_pids: set[int] = field(default_factory=set)

    # ---- agents -------------------------------------------------------------------------------------

    async def spawn(self, agent: Agent, via: str) -> Agent:
        command = [
            sys.executable,
            "-u",
            str(AGENT),
            agent.role,
            agent.name,
            str(agent.log),
            via,
            agent.partner,
        ]
        # The role names the agent's tmux window: its own name, so a person can attach to it.
        response = await self.http.post("/v1/runtimes/spawn", json={
            "workspace_id": agent.workspace, "agent_id": agent.name, "kind": "generic", "role": agent.name,
            "command": command, "cwd": str(self.folder)})  # fmt: skip
        if response.status_code != 201:
            raise RuntimeError(f"spawning {agent.name}: HTTP {response.status_code} {response.text[:300]}")
        runtime = response.json()["runtime"]
        agent.runtime_id = runtime["runtime_id"]
        agent.pane_id = runtime["pty_target"]
        if runtime.get("pid"):
            self.pane_pids.add(int(runtime["pid"]))
        await self.wait_idle(agent, 60)
        return agent

    async def state(self, agent: Agent) -> str:
        answer = (await self.http.get(f"/v1/runtimes/{agent.runtime_id}")).json()
        return str(answer.get("agent_state", ""))

    async def wait_idle(self, agent: Agent, within: float = 30) -> None:
        """Its prompt on the screen and the supervisor reading it as idle (the wake goes straight in)."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if self.pane(agent).rstrip().endswith(f"{agent.role}>") and await self.state(agent) == "idle":
                return
            await asyncio.sleep(0.02)
        raise RuntimeError(f"{agent.name} not idle within {within} s:\n{self.pane(agent)[-600:]}")

    def pane(self, agent: Agent, *, scrollback: bool = False) -> str:
        args = ["tmux", "-S", self.socket, "capture-pane", "-p", "-J", "-t", agent.pane_id]
        args += ["-S", "-"] if scrollback else []
        return subprocess.run(args, capture_output=True, text=True, check=False).stdout

    def lines_read(self, agent: Agent) -> list[dict[str, Any]]:
        """What the agent read from its input, line by line (its own log)."""
        if not agent.log.exists():
            return []
        return [json.loads(line) for line in agent.log.read_text().splitlines() if line.strip()]

    # ---- threads ------------------------------------------------------------------------------------

    async def post(
        self, workspace: str, thread: str, to: str, body: str
    ) -> tuple[float, float, dict[str, Any]]:
        """As the person: (monotonic time sent, monotonic time answered, the answer)."""
        sent = time.monotonic()
        response = await self.http.post("/v1/threads/messages", json={
            "workspace_id": workspace, "thread_id": thread, "to": [to], "kind": "message", "body": body})  # fmt: skip
        answered = time.monotonic()
        if response.status_code != 201:
            raise RuntimeError(f"posting to {thread}: HTTP {response.status_code} {response.text[:300]}")
        return sent, answered, response.json()

    async def messages(self, workspace: str, thread: str) -> list[dict[str, Any]]:
        response = await self.http.post("/v1/threads/read", json={
            "workspace_id": workspace, "thread_id": thread, "all": True, "peek": True, "limit": 500})  # fmt: skip
        if response.status_code == 404:
            return []
        response.raise_for_status()
        return list(response.json().get("messages", []))

    async def trigger(self, agent: Agent, prompt: str) -> tuple[str, dict[str, Any]]:
        trigger_id = f"bench-{uuid.uuid4().hex[:16]}"
        response = await self.http.post("/v1/triggers", json={
            "trigger_id": trigger_id, "agent_id": agent.name, "workspace_id": agent.workspace,
            "thread_id": f"direct-{trigger_id}", "prompt": prompt})  # fmt: skip
        response.raise_for_status()
        return trigger_id, response.json()

    async def trigger_result(self, trigger_id: str) -> str:
        return str((await self.http.get(f"/v1/triggers/{trigger_id}")).json().get("result", ""))

    async def metrics(self) -> str:
        return (await self.http.get("/metrics")).text

    # ---- the end ------------------------------------------------------------------------------------

    def collect_pane_pids(self) -> None:
        done = subprocess.run(["tmux", "-S", self.socket, "list-panes", "-a", "-F", "#{pane_pid}"],
                              capture_output=True, text=True, check=False)  # fmt: skip
        self.pane_pids.update(int(p) for p in done.stdout.split() if p.isdigit())

    def end_leftovers(self) -> int:
        """Ends the tmux server, then what still runs of the panes' processes (and theirs)."""
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True, check=False)
        ended = 0
        for pid in sorted(self.pane_pids):
            with contextlib.suppress(psutil.Error):
                process = psutil.Process(pid)
                for one in [*process.children(recursive=True), process]:
                    with contextlib.suppress(psutil.Error):
                        one.kill()
                        ended += 1
        return ended


def note_times(messages: list[dict[str, Any]], agent: str) -> dict[str, list[float]]:
    """kronii's outcome notes about `agent` on a thread: delivered and deferred, their times."""
    out: dict[str, list[float]] = {"delivered": [], "deferred": [], "other": []}
    for message in messages:
        if message.get("kind") != "outcome":
            continue
        body = str(message.get("body", ""))
        if body.startswith(f"woke {agent}: delivered"):
            out["delivered"].append(epoch(message.get("at")))
        elif body.startswith(f"waking {agent} is deferred"):
            out["deferred"].append(epoch(message.get("at")))
        elif f" {agent}" in f" {body}":
            out["other"].append(epoch(message.get("at")))
    return out


def histogram(text: str, name: str) -> dict[float, float]:
    """The cumulative buckets of a histogram in the Prometheus text (le -> count)."""
    buckets: dict[float, float] = {}
    for line in text.splitlines():
        if line.startswith(f"{name}_bucket{{"):
            le = line.split('le="', 1)[1].split('"', 1)[0]
            buckets[float("inf") if le == "+Inf" else float(le)] = float(line.rsplit(" ", 1)[1])
    return buckets


def counter(text: str, name: str, label: str = "") -> float:
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name) and (not label or label in line) and not line.startswith("#"):
            head = line.split(" ", 1)[0]
            if head == name or head.startswith(f"{name}{{"):
                total += float(line.rsplit(" ", 1)[1])
    return total


def histogram_figures(before: str, after: str, name: str) -> dict[str, Any]:
    """What the histogram counted between two scrapes: count, mean, and the bucket holding the p95."""
    first, last = histogram(before, name), histogram(after, name)
    deltas = {le: last.get(le, 0.0) - first.get(le, 0.0) for le in sorted(last)}
    count = deltas.get(float("inf"), 0.0)
    total = counter(after, f"{name}_sum") - counter(before, f"{name}_sum")
    p95 = next((le for le, n in deltas.items() if count and n >= 0.95 * count), None)
    return {
        "count": int(count),
        # The histogram counts seconds.
        "mean_ms": round(total / count * 1000, 1) if count else None,
        "p95_at_most_ms": p95 * 1000 if p95 is not None else None,
    }


@contextlib.asynccontextmanager
async def supervisor_running(folder: Path, settings: dict[str, str]) -> AsyncIterator[Harness]:
    """A supervisor with its defaults (and `settings`) against embedded NATS, Redis, PostgreSQL and
    a private tmux server; the harness's client posts as the person (a `cli:` token)."""
    from kronii.launcher.infra import free_port
    from kronii.stores.db import migrate_up
    from kronii.supervisor.core.tokens import issue_token

    from tests.agents.harness import private_socket
    from tests.infra import start_test_infra
    from tests.mesh import Proc, python_module, wait_http_ready

    with start_test_infra() as infra, private_socket() as socket:
        migrate_up(infra.database)
        http_port, grpc_port = free_port(), free_port()
        env = {**os.environ, **infra.env(), **settings}
        env.update(
            KRONII_DATA_DIR=str(folder / "data"), KRONII_SUPERVISOR_HTTP_PORT=str(http_port),
            KRONII_SUPERVISOR_GRPC_PORT=str(grpc_port), KRONII_SUPERVISOR_TMUX_SOCKET=socket,
            KRONII_SUPERVISOR_TOKEN_SECRET=SECRET, KRONII_LOG_FORMAT="json",
            KRONII_LOG_LEVEL=os.environ.get("BENCH_LOG_LEVEL", "WARNING"),
        )  # fmt: skip
        supervisor = Proc(python_module("kronii.supervisor"), env)
        token = issue_token(SECRET.encode(), subject="cli:bench", scopes={"trigger", "operate", "read"},
                            workspaces={"*"}, now=time.time(), ttl_secs=7200)  # fmt: skip
        url = f"http://127.0.0.1:{http_port}"
        limits = httpx.Limits(max_connections=40)
        http = httpx.AsyncClient(
            base_url=url, headers={"authorization": f"Bearer {token}"}, timeout=120, limits=limits
        )
        harness = Harness(http, socket, folder, psutil.Process(supervisor.process.pid))
        try:
            wait_http_ready(url, proc=supervisor)
            yield harness
        finally:
            (folder / "supervisor.log").write_text("\n".join(supervisor.lines) + "\n")
            harness.collect_pane_pids()
            await http.aclose()
            supervisor.terminate()
            ended = harness.end_leftovers()
            if ended:
                print(f"ended {ended} leftover agent processes", file=sys.stderr)
