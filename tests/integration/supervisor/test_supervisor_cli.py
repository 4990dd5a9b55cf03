"""`kronii agents ...` (python -m kronii.supervisor.cli) against a running supervisor: spawn prints
how to attach, list, trigger, pause and resume, logs, ack from a hook, and clear errors."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid

from tests.agents.harness import FAKE_CODEX
from tests.integration.supervisor.conftest import SECRET, Supervisor, wait_ready_pane


def kronii(
    supervisor: Supervisor, *args: str, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("KRONII_")}
    base.update(KRONII_SUPERVISOR_URL=supervisor.url, KRONII_SUPERVISOR_TOKEN_SECRET=SECRET)
    base.update(env or {})
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
    assert refused.returncode == 2 and "lacks the 'operate' scope" in refused.stderr
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
    assert unreachable.returncode == 1 and "not reachable" in unreachable.stderr
    no_command = kronii(supervisor, "agents", "spawn", "--workspace", "cli", "--agent", "x")
    assert no_command.returncode == 2 and "give the agent's command after --" in no_command.stderr
    refused = kronii(supervisor, "agents", "trigger", "--workspace", "cli", "--agent", "x", "--force", "go")
    assert refused.returncode == 2 and "human_override:" in refused.stderr
    failed = kronii(
        supervisor,
        "agents",
        "trigger",
        "--workspace",
        "cli",
        "--agent",
        f"nobody-{uuid.uuid4().hex[:4]}",
        "hello",
    )
    assert failed.returncode == 1 and "failed" in failed.stdout and "RUNTIME_OFFLINE" in failed.stdout
    missing = kronii(supervisor, "agents", "logs", "rt-missing")
    assert missing.returncode == 2 and "no runtime 'rt-missing'" in missing.stderr
