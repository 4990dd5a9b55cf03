"""`kronii agents ...` (python -m kronii.supervisor.cli) against a running supervisor: spawn prints
how to attach, list, trigger, pause and resume, logs, ack from a hook, and clear errors; the
supervisor's address from KRONII_SUPERVISOR_HTTP_PORT, and no minted token for a server that cannot
prove it is this host's supervisor."""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from kronii.supervisor.core.identity import new_nonce, proof_matches

from tests.agents.harness import FAKE_CODEX
from tests.integration.supervisor.conftest import SECRET, Supervisor, wait_ready_pane

NOT_THIS_SUPERVISOR = (
    "is not this host's supervisor (its identity proof does not match the local secret); "
    "refusing to send it a token. Set KRONII_SUPERVISOR_URL or --url"
)


def kronii(
    supervisor: Supervisor,
    *args: str,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    without: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("KRONII_")}
    base.update(KRONII_SUPERVISOR_URL=supervisor.url, KRONII_SUPERVISOR_TOKEN_SECRET=SECRET)
    base.update(env or {})
    for name in without:
        base.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "kronii.supervisor.cli", *args], env=base, capture_output=True, text=True,
        timeout=60, input=stdin,
    )  # fmt: skip


def _spawn(supervisor: Supervisor, agent: str, role: str = "") -> str:
    done = kronii(supervisor, "agents", "spawn", "--workspace", "cli", "--agent", agent, "--kind", "codex",
                  "--role", role or agent, "--", sys.executable, str(FAKE_CODEX))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"watch it: tmux -S {supervisor.socket} attach -t agents_cli" in done.stdout
    runtime_id = done.stdout.split(" as ", 1)[1].split()[0]
    wait_ready_pane(supervisor, runtime_id)
    return runtime_id


def test_spawn_list_trigger_and_logs(supervisor: Supervisor) -> None:
    agent = f"cli-{uuid.uuid4().hex[:6]}"
    runtime_id = _spawn(supervisor, agent, role="exec")
    listed = kronii(supervisor, "agents", "list", "--workspace", "cli")
    assert listed.returncode == 0 and runtime_id in listed.stdout and "exec" in listed.stdout
    done = kronii(
        supervisor,
        "agents",
        "trigger",
        "--workspace",
        "cli",
        "--agent",
        agent,
        "-",
        stdin="from the cli\nline two\n",
    )
    assert done.returncode == 0, done.stderr
    assert ": delivered via tmux" in done.stdout
    assert any(entry["prompt"] == "from the cli\nline two" for entry in supervisor.codex.submits())
    logs = kronii(supervisor, "agents", "logs", runtime_id, "-n", "40")
    assert logs.returncode == 0 and "submitted: from the cli" in logs.stdout


def test_pause_defers_and_resume_lets_the_trigger_through(supervisor: Supervisor) -> None:
    agent = f"cli-{uuid.uuid4().hex[:6]}"
    runtime_id = _spawn(supervisor, agent)
    assert "paused" in kronii(supervisor, "agents", "pause", runtime_id, "--reason", "review").stdout
    deferred = kronii(
        supervisor, "agents", "trigger", "--workspace", "cli", "--agent", agent, "after the pause"
    )
    assert deferred.returncode == 0 and "deferred" in deferred.stdout and "RUNTIME_PAUSED" in deferred.stdout
    assert "running" in kronii(supervisor, "agents", "resume", runtime_id).stdout
    deadline = time.monotonic() + 8
    while time.monotonic() < deadline and not any(
        e["prompt"] == "after the pause" for e in supervisor.codex.submits()
    ):
        time.sleep(0.05)
    assert any(e["prompt"] == "after the pause" for e in supervisor.codex.submits())


def test_ack_from_a_hook_uses_the_runtime_environment(supervisor: Supervisor) -> None:
    agent = f"cli-{uuid.uuid4().hex[:6]}"
    runtime_id = _spawn(supervisor, agent)
    minted = kronii(
        supervisor,
        "agents",
        "token",
        "--subject",
        f"runtime:{runtime_id}",
        "--workspace",
        "cli",
        "--scope",
        "read",
    )
    hook_env = {"KRONII_RUNTIME_ID": runtime_id, "KRONII_RUNTIME_TOKEN": minted.stdout.strip()}
    refused = kronii(supervisor, "agents", "ack", env=hook_env)
    assert refused.returncode == 4 and "lacks the 'operate' scope" in refused.stderr
    operator = kronii(supervisor, "agents", "token", "--workspace", "cli").stdout.strip()
    ok = kronii(
        supervisor,
        "agents",
        "ack",
        '{"type": "agent-turn-complete"}',
        env={**hook_env, "KRONII_RUNTIME_TOKEN": operator},
    )
    assert ok.returncode == 0, ok.stderr
    beat = kronii(
        supervisor,
        "agents",
        "heartbeat",
        "--status",
        "idle",
        env={**hook_env, "KRONII_RUNTIME_TOKEN": operator},
    )
    assert beat.returncode == 0 and f"{runtime_id}: idle" in beat.stdout


def test_errors_are_sentences_with_exit_codes(supervisor: Supervisor) -> None:
    unreachable = kronii(supervisor, "agents", "list", env={"KRONII_SUPERVISOR_URL": "http://127.0.0.1:9"})
    assert unreachable.returncode == 5 and "not reachable" in unreachable.stderr
    assert "start it with `kronii up`" in unreachable.stderr
    no_command = kronii(supervisor, "agents", "spawn", "--workspace", "cli", "--agent", "x")
    assert no_command.returncode == 2 and "give the agent's command after --" in no_command.stderr
    refused = kronii(supervisor, "agents", "trigger", "--workspace", "cli", "--agent", "x", "--force", "go")
    assert refused.returncode == 2 and "human_override:" in refused.stderr  # a bad request: usage
    nobody = f"nobody-{uuid.uuid4().hex[:4]}"
    unknown = kronii(supervisor, "agents", "trigger", "--workspace", "cli", "--agent", nobody, "hello")
    assert unknown.returncode == 3 and f"no such agent: {nobody}" in unknown.stderr, unknown
    assert "RUNTIME_OFFLINE" not in unknown.stdout + unknown.stderr
    missing = kronii(supervisor, "agents", "logs", "rt-missing")
    assert missing.returncode == 3 and "no runtime 'rt-missing'" in missing.stderr


# ---- the supervisor's address, and who gets a minted token ------------------------------------------


@dataclass
class Foreign:
    """Someone else's server on a port: records every request's path and Authorization header."""

    url: str
    port: int
    requests: list[tuple[str, str | None]] = field(default_factory=list)


@contextlib.contextmanager
def foreign_server(identity: str) -> Iterator[Foreign]:
    """identity: "missing" answers 404 on /v1/identity (not a kronii supervisor); "wrong" answers
    with a well-formed proof from another secret (another user's supervisor). Every other path
    answers 200 with an empty runtime list, as a supervisor would."""
    seen: list[tuple[str, str | None]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._answer()

        def do_POST(self) -> None:
            self._answer()

        def _answer(self) -> None:
            body: dict[str, Any]
            seen.append((self.path, self.headers.get("authorization")))
            status, body = 200, {"runtimes": []}
            if urlsplit(self.path).path == "/v1/identity" and identity == "missing":
                status, body = 404, {"detail": "Not Found"}
            elif urlsplit(self.path).path == "/v1/identity":
                status, body = 200, {"service": "supervisor", "proof": "ab" * 32}
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port = int(server.server_address[1])
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), name="foreign-server", daemon=True)
    thread.start()
    try:
        yield Foreign(f"http://127.0.0.1:{port}", port, seen)
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(params=["missing", "wrong"], ids=["no-identity-route", "wrong-proof"])
def foreign(request: pytest.FixtureRequest) -> Iterator[Foreign]:
    with foreign_server(str(request.param)) as server:
        yield server


def _by_port(port: int, data_dir: Path) -> dict[str, str]:
    """No URL: only KRONII_SUPERVISOR_HTTP_PORT, and a data directory without a `kronii up`."""
    return {"KRONII_SUPERVISOR_HTTP_PORT": str(port), "KRONII_DATA_DIR": str(data_dir)}


def test_identity_route_proves_the_secret_without_a_token(supervisor: Supervisor) -> None:
    nonce = new_nonce()
    answer = httpx.get(f"{supervisor.url}/v1/identity", params={"nonce": nonce})
    assert answer.status_code == 200, answer.text
    assert answer.json()["service"] == "supervisor"
    port = int(supervisor.url.rsplit(":", 1)[1])
    assert proof_matches(SECRET.encode(), nonce, answer.json()["proof"], port)
    assert not proof_matches(SECRET.encode(), nonce, answer.json()["proof"], port + 1)
    bad = httpx.get(f"{supervisor.url}/v1/identity", params={"nonce": "not-hex"})
    assert bad.status_code == 400 and "hex digits" in bad.json()["detail"]
    assert "/v1/identity" in httpx.get(f"{supervisor.url}/openapi.json").json()["paths"]


def test_agents_list_uses_kronii_supervisor_http_port_when_no_url_is_set(
    supervisor: Supervisor, tmp_path: Path
) -> None:
    port = urlsplit(supervisor.url).port
    assert port is not None
    agent = f"cli-{uuid.uuid4().hex[:6]}"
    runtime_id = _spawn(supervisor, agent)
    listed = kronii(
        supervisor, "agents", "list", "--workspace", "cli", "--agent", agent,
        env=_by_port(port, tmp_path / "data"), without=("KRONII_SUPERVISOR_URL",),
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    assert runtime_id in listed.stdout


def test_agents_refuses_to_send_a_minted_token_to_a_server_that_is_not_the_supervisor(
    supervisor: Supervisor, foreign: Foreign, tmp_path: Path
) -> None:
    done = kronii(
        supervisor, "agents", "list",
        env=_by_port(foreign.port, tmp_path / "data"), without=("KRONII_SUPERVISOR_URL",),
    )  # fmt: skip
    assert done.returncode == 4, done.stdout + done.stderr
    assert f"kronii: the server at {foreign.url} {NOT_THIS_SUPERVISOR}" in done.stderr
    assert [path.split("?")[0] for path, _ in foreign.requests] == ["/v1/identity"]
    assert all(authorization is None for _, authorization in foreign.requests)


def test_agents_refuses_a_foreign_server_named_by_the_url_flag_too(
    supervisor: Supervisor, foreign: Foreign
) -> None:
    done = kronii(supervisor, "agents", "--url", foreign.url, "list")
    assert done.returncode == 4 and NOT_THIS_SUPERVISOR in done.stderr
    assert all(authorization is None for _, authorization in foreign.requests)


def test_a_token_the_caller_gave_is_sent_without_the_identity_check(
    supervisor: Supervisor, tmp_path: Path
) -> None:
    with foreign_server("missing") as server:
        done = kronii(
            supervisor, "agents", "list",
            env={**_by_port(server.port, tmp_path / "data"), "KRONII_SUPERVISOR_TOKEN": "chosen-token"},
            without=("KRONII_SUPERVISOR_URL",),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert server.requests == [
            ("/v1/runtimes?workspace_id=&agent_id=&include_offline=false", "Bearer chosen-token")
        ]
