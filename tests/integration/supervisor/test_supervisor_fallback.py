"""Resume and spawn as a person would run them (seed 002, section 9.2), with the stand-in Codex:
in the agent's working directory, in a visible window of the workspace's tmux session, and checked
for a real start; a step that fails is never reported delivered."""

from __future__ import annotations

import subprocess
import time
import uuid
from pathlib import Path

from tests.integration.supervisor.conftest import Supervisor, wait_ready_pane


def _agent(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:6]}"


def _windows(supervisor: Supervisor, session: str) -> list[str]:
    done = subprocess.run(
        ["tmux", "-S", supervisor.socket, "list-windows", "-t", session, "-F", "#{window_name}"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.split()


def _dead_panes(supervisor: Supervisor, session: str) -> list[str]:
    done = subprocess.run(
        ["tmux", "-S", supervisor.socket, "list-panes", "-s", "-t", session, "-F",
         "#{window_name} #{pane_dead} #{pane_dead_status}"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return [line for line in done.stdout.splitlines() if line.split()[1] == "1"]


def test_a_resume_that_exits_1_after_5_s_fails_and_spawn_follows_in_the_agents_cwd_visibly(
    supervisor: Supervisor, tmp_path: Path
) -> None:
    agent = _agent("resumer")
    project = tmp_path / "project"
    project.mkdir()
    spawned = supervisor.spawn(agent, workspace="wsr", session_id="sess-r1", role="coder", cwd=str(project))
    runtime = spawned["runtime"]
    assert runtime["cwd"] == str(project)
    wait_ready_pane(supervisor, runtime["runtime_id"])
    with supervisor.client() as http:
        http.post(f"/v1/runtimes/{runtime['runtime_id']}/deregister", json={"reason": "test: agent gone"})
    (supervisor.folder / "resume_delay").write_text("5")
    (supervisor.folder / "resume_exit").write_text("1")
    before = len(supervisor.launches())
    started = time.monotonic()
    try:
        outcome = supervisor.trigger(agent, "carry on with the migration", workspace="wsr")
    finally:
        (supervisor.folder / "resume_exit").unlink()
        (supervisor.folder / "resume_delay").unlink()
    # Each resume ran its 5 s and failed; neither was taken for a start.
    assert time.monotonic() - started >= 10
    assert outcome["fallback_chain"] == ["resume:failed", "resume:failed", "spawn"], outcome
    assert outcome["result"] == "delivered" and outcome["delivery_backend"] == "spawn", outcome
    launches = supervisor.launches()[before:]
    assert [(entry["kind"], entry["argv"][:3]) for entry in launches] == [
        ("resume", ["exec", "resume", "sess-r1"]), ("resume", ["exec", "resume", "sess-r1"]),
        ("spawn", ["carry on with the migration"]),
    ]  # fmt: skip
    assert {entry["cwd"] for entry in launches} == {str(project)}, "every step runs in the agent's directory"
    windows = _windows(supervisor, "agents_wsr")
    assert windows.count("coder-resume") == 2 and "coder" in windows, windows
    with supervisor.client() as http:
        old = http.get(f"/v1/runtimes/{runtime['runtime_id']}").json()
        new = http.get(f"/v1/runtimes/{outcome['runtime_id']}").json()
    assert new["cwd"] == str(project) and new["status"] != "offline"
    assert old["status"] == "offline"


def test_a_spawned_agent_that_dies_within_2_s_is_a_failed_spawn_not_a_delivery(
    supervisor: Supervisor,
) -> None:
    agent = _agent("quitter")
    runtime = supervisor.spawn(agent, kind="quitter", workspace="wsq", role="quits")["runtime"]
    wait_ready_pane(supervisor, runtime["runtime_id"])
    with supervisor.client() as http:
        http.post(f"/v1/runtimes/{runtime['runtime_id']}/deregister", json={"reason": "test: agent gone"})
    outcome = supervisor.trigger(agent, "are you there", workspace="wsq")
    assert outcome["result"] == "failed" and outcome["error_code"] == "SPAWN_FAILED", outcome
    assert outcome["detail"].startswith("spawn failed: exited with"), outcome["detail"]
    # The failed start stays on screen, with its status, for a person to read.
    assert [line.split()[:2] for line in _dead_panes(supervisor, "agents_wsq")] == [["quits", "1"]]
