"""kill -9 of each embedded server in turn while supervisor triggers, scheduler plans and capture
jobs flow through a real `kronii up` on a virtual desktop (Xvfb, openbox, an xterm in focus): every
server is back without a person, every acknowledged item has its row and its audit row, and no
prompt is typed twice."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import httpx
import psutil
import psycopg
import pytest
from kronii.capture.v1 import capture_pb2 as cpb
from kronii.capture.v1 import capture_pb2_grpc as cpb_grpc
from kronii.runtime.rendezvous import capture_socket_path

from tests.agents.harness import FAKE_CODEX, CodexBin, codex_bin, private_socket
from tests.desktop import start_xvfb
from tests.integration.capture.capture_support import planted_window
from tests.mesh import Proc, standalone_env, wait_until

KRONII = str(Path(sys.executable).parent / "kronii")


@dataclass
class Up:
    env: dict[str, str]
    data_dir: Path
    proc: Proc
    codex: CodexBin
    token: str

    def url(self, service: str) -> str:
        return f"http://127.0.0.1:{self.env[f'KRONII_{service.upper()}_HTTP_PORT']}"

    def status_ok(self) -> bool:
        done = subprocess.run([KRONII, "status"], env=self.env, capture_output=True, text=True, timeout=30)
        return done.returncode == 0

    def database(self) -> psycopg.Connection[Any]:
        password = (self.data_dir / "secrets" / "postgres_password").read_text().strip()
        return psycopg.connect(
            host="127.0.0.1",
            port=int(self.env["KRONII_EMBEDDED_POSTGRES_PORT"]),
            user="kronii",
            password=password,
            dbname="kronii",
            autocommit=True,
        )


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    folder = tmp_path_factory.mktemp("kill9")
    codex = codex_bin(folder)
    data_dir = folder / "data"
    with private_socket() as socket, start_xvfb() as display, planted_window(display, "kill -9 chaos"):
        env = {**standalone_env(data_dir), **codex.env(), "KRONII_TEST_FAST_PG": "1"}
        env.update(KRONII_SUPERVISOR_TMUX_SOCKET=socket, DISPLAY=display)
        # Room for the flow's one request every 0.3 s (the default allows 10 a minute per app).
        env.update(KRONII_CAPTURE_GLOBAL_PER_MINUTE="600", KRONII_CAPTURE_PER_APP_PER_MINUTE="600")
        proc = Proc([KRONII, "up"], env)
        try:
            proc.wait_for_line(lambda line: line.strip() == "kronii is up", 120)
            cli = {**env, "KRONII_SUPERVISOR_URL": f"http://127.0.0.1:{env['KRONII_SUPERVISOR_HTTP_PORT']}"}
            agents = [sys.executable, "-m", "kronii.supervisor.cli", "agents"]
            spawned = subprocess.run(
                [*agents, "spawn", "--workspace", "chaos", "--agent", "worker", "--kind", "codex", "--",
                 sys.executable, str(FAKE_CODEX)],
                env=cli, capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            assert spawned.returncode == 0, spawned.stderr
            token = subprocess.run(
                [*agents, "token", "--scope", "trigger", "--scope", "read"],
                env=cli, capture_output=True, text=True, timeout=60, check=True,
            ).stdout.strip()  # fmt: skip
            yield Up(env, data_dir, proc, codex, token)
        finally:
            proc.terminate(timeout=30)


@dataclass
class Flow:
    """Triggers and plans sent one after another until stopped; what each was answered."""

    up: Up
    stop: threading.Event = field(default_factory=threading.Event)
    triggers: list[tuple[str, int, dict[str, Any]]] = field(default_factory=list)
    plans: list[tuple[str, int]] = field(default_factory=list)
    captures: list[tuple[str, str]] = field(default_factory=list)  # (job id or "", gRPC code)

    def _triggers(self) -> None:
        with httpx.Client(base_url=self.up.url("supervisor"), timeout=20) as http:
            while not self.stop.is_set():
                trigger_id = f"k9-{uuid.uuid4().hex[:10]}"
                body = {"trigger_id": trigger_id, "agent_id": "worker", "workspace_id": "chaos",
                        "thread_id": trigger_id, "prompt": f"prompt {trigger_id}"}  # fmt: skip
                try:
                    answer = http.post(
                        "/v1/triggers", json=body, headers={"authorization": f"Bearer {self.up.token}"}
                    )
                    self.triggers.append((trigger_id, answer.status_code, answer.json()))
                except httpx.HTTPError:
                    self.triggers.append((trigger_id, 0, {}))
                    time.sleep(0.2)

    def _plans(self) -> None:
        with httpx.Client(base_url=self.up.url("scheduler"), timeout=20) as http:
            while not self.stop.is_set():
                run_id = f"k9-{uuid.uuid4().hex[:10]}"
                try:
                    answer = http.post(
                        "/v1/plans", json={"run_id": run_id, "app": "chaos", "wakeup_in_ms": 600_000}
                    )
                    self.plans.append((run_id, answer.status_code))
                except httpx.HTTPError:
                    self.plans.append((run_id, 0))
                time.sleep(0.05)

    def _captures(self) -> None:
        socket = capture_socket_path(self.up.data_dir)
        with grpc.insecure_channel(f"unix:{socket}") as channel, httpx.Client(timeout=5) as http:
            stub = cpb_grpc.ScreenCaptureStub(channel)
            while not self.stop.is_set():
                try:
                    focus = http.get(f"{self.up.url('sensor')}/v1/snapshot").json().get("focus") or {}
                    request = cpb.CaptureRequest(
                        process_id=int(focus.get("pid", 0)), window_id=int(focus.get("window_id", 0)),
                        app_name=str(focus.get("app_name", "")), app_start_time=int(focus.get("app_start_time", 0)),
                        bypass=cpb.STRICT, requester="chaos",
                    )  # fmt: skip
                    job = stub.RequestScreenCapture(request, timeout=10)
                    self.captures.append((job.job_id, "OK"))
                except grpc.RpcError as error:
                    self.captures.append(("", error.code().name))
                except (httpx.HTTPError, ValueError):
                    self.captures.append(("", "SENSOR"))
                time.sleep(0.3)

    @contextlib.contextmanager
    def running(self) -> Iterator[Flow]:
        threads = [
            threading.Thread(target=target) for target in (self._triggers, self._plans, self._captures)
        ]
        for thread in threads:
            thread.start()
        try:
            yield self
        finally:
            self.stop.set()
            for thread in threads:
                thread.join(30)


def _server_pid(data_dir: Path, name: str) -> int | None:
    """The live pid `kronii up` has for the server (its state file), None while it is down."""
    try:
        state = json.loads((data_dir / "run" / "up.json").read_text())
        pid = int(state["infra"][name]["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return pid if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE else None


def _missing(up: Up, flow: Flow) -> tuple[list[str], list[str], list[str]]:
    """Acknowledged items without their rows: (triggers, plans, capture jobs). A capture job's
    record is its terminal audit row (the job itself lives in Redis until it ends)."""
    acked_triggers = {tid: body for tid, code, body in flow.triggers if code == 200}
    acked_plans = {run_id for run_id, code in flow.plans if code == 200}
    with up.database() as conn:
        rows = {
            r[0]
            for r in conn.execute("SELECT trigger_id FROM supervisor_triggers WHERE trigger_id LIKE 'k9-%'")
        }
        audited = {
            r[0] for r in conn.execute("SELECT subject FROM audit_log WHERE action = 'supervisor.trigger'")
        }
        planned = {r[0] for r in conn.execute("SELECT actor FROM audit_log WHERE action = 'schedule.plan'")}
        jobs = {r[0] for r in conn.execute("SELECT subject FROM audit_log WHERE action = 'capture.job'")}
    missing_triggers = [
        tid
        for tid, body in acked_triggers.items()
        if tid not in rows or (body.get("result") != "deferred" and tid not in audited)
    ]
    acked_jobs = {job_id for job_id, code in flow.captures if code == "OK"}
    return missing_triggers, sorted(acked_plans - planned), sorted(acked_jobs - jobs)


@pytest.mark.parametrize("server", ["postgres", "redis", "nats"])
def test_kill9_of_a_server_under_load_loses_no_acknowledged_item(up: Up, server: str) -> None:
    flow = Flow(up)
    with flow.running():
        time.sleep(2)
        pid = _server_pid(up.data_dir, server)
        assert pid is not None, f"kronii up names no live {server}"
        killed_at = time.monotonic()
        psutil.Process(pid).send_signal(signal.SIGKILL)
        wait_until(
            lambda: _server_pid(up.data_dir, server) not in (None, pid),
            30,
            f"the embedded {server} restarted",
        )
        wait_until(up.status_ok, 60, "kronii status all ready again", interval=0.5)
        back_in = time.monotonic() - killed_at
        time.sleep(2)
    assert sum(code == 200 for _, code, _ in flow.triggers) > 0, flow.triggers[-5:]
    assert sum(code == 200 for _, code in flow.plans) > 0, flow.plans[-5:]
    refused = {code for _, code, _ in flow.triggers} | {code for _, code in flow.plans}
    assert refused <= {0, 200, 503}, f"answers other than success or 503 Retry-After: {refused}"
    capture_codes = {code for _, code in flow.captures}
    assert capture_codes <= {"OK", "UNAVAILABLE", "RESOURCE_EXHAUSTED", "SENSOR"}, capture_codes

    assert any(code == "OK" for _, code in flow.captures), flow.captures[-5:]
    # Outboxes drain within a few seconds of PostgreSQL's return; capture jobs end within their TTL.
    with contextlib.suppress(AssertionError):
        wait_until(
            lambda: _missing(up, flow) == ([], [], []), 60, "every acknowledged item recorded", interval=1
        )
    missing_triggers, missing_plans, missing_jobs = _missing(up, flow)
    assert not missing_triggers, (
        f"{len(missing_triggers)} acknowledged trigger(s) have no row: {missing_triggers[:5]}"
    )
    assert not missing_plans, (
        f"{len(missing_plans)} acknowledged plan(s) have no audit row: {missing_plans[:5]}"
    )
    assert not missing_jobs, (
        f"{len(missing_jobs)} acknowledged capture job(s) never ended on record: {missing_jobs[:5]}"
    )

    if server == "postgres":
        # The outage itself is in the audit log once it ends, as each service that needs PostgreSQL saw it.
        with up.database() as conn:
            outages = conn.execute(
                "SELECT service, detail FROM audit_log WHERE action = 'service.outage' AND subject = 'postgres'"
            ).fetchall()
        assert {"scheduler", "supervisor"} <= {service for service, _ in outages}, outages
        assert all(detail["seconds"] > 0 for _, detail in outages)

    prompts = [entry["prompt"] for entry in up.codex.submits()]
    assert len(prompts) == len(set(prompts)), "a prompt was typed twice"
    verify = subprocess.run(
        [KRONII, "audit", "verify"], env=up.env, capture_output=True, text=True, timeout=60
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
    answers = {
        "triggers": dict(Counter(code for _, code, _ in flow.triggers)),
        "plans": dict(Counter(code for _, code in flow.plans)),
        "captures": dict(Counter(code for _, code in flow.captures)),
    }
    print(json.dumps({"server": server, "back_in_s": round(back_in, 1), **answers}))
