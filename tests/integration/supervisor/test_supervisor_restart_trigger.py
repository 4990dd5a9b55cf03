"""Issue 26 item 13: "in the second after a restart of the shared services process, one trigger
into a live pane is answered `failed RUNTIME_OFFLINE`". The supervisor is killed with SIGKILL while
its agent's pane lives on, a new one starts in its place, and triggers sent in the first second after
it answers /readyz (while it opens its tmux control connection, and its reconcile loop looks at the
same pane) are delivered into the pane, or deferred with TMUX_UNAVAILABLE and then delivered; never
failed, never taken offline. The same holds for a trigger sent right after the control client itself
is killed (the connection is re-opened under it)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from tests.agents.harness import FAKE_CODEX, private_socket, read_jsonl
from tests.infra import InfraUrls
from tests.integration.supervisor.conftest import (
    SETTINGS,
    Supervisor,
    start_supervisor,
    token,
    wait_ready_pane,
)

AGENT, WORKSPACE = "live-after-restart", "wsrestart"


def _settings() -> dict[str, str]:
    kinds = json.loads(SETTINGS["KRONII_SUPERVISOR_AGENT_KINDS"])
    # No resume, no spawn: a pane taken as gone would be `failed RUNTIME_OFFLINE` at once.
    kinds["paneonly"] = {
        "input_marker": "\u203a", "submit_pause_secs": 0.15, "resume_argv": [], "spawn_argv": [],
    }  # fmt: skip
    return {**SETTINGS, "KRONII_SUPERVISOR_AGENT_KINDS": json.dumps(kinds)}


def _fire(url: str, prompt: str, answers: list[dict[str, Any]]) -> threading.Thread:
    body = {"trigger_id": f"t-{uuid.uuid4().hex[:10]}", "agent_id": AGENT, "workspace_id": WORKSPACE,
            "thread_id": f"th-{uuid.uuid4().hex[:8]}", "prompt": prompt}  # fmt: skip
    headers = {"authorization": f"Bearer {token()}"}

    def call() -> None:
        response = httpx.post(f"{url}/v1/triggers", json=body, headers=headers, timeout=60)
        answers.append({"status": response.status_code, "prompt": prompt, **response.json()})

    thread = threading.Thread(target=call)
    thread.start()
    return thread


def _final(sup: Supervisor, answer: dict[str, Any]) -> dict[str, Any]:
    """The trigger's outcome once it is no longer deferred (a deferral comes back by itself)."""
    deadline = time.monotonic() + 20
    outcome = answer
    while outcome.get("result") == "deferred" and time.monotonic() < deadline:
        time.sleep(0.1)
        outcome = sup.get_trigger(answer["trigger_id"])
    return outcome


def _control_clients(socket: str) -> list[int]:
    listed = subprocess.run(
        ["tmux", "-S", socket, "list-clients", "-F", "#{client_pid} #{client_control_mode} #{session_name}"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    return [int(pid) for pid, mode, session in (line.split() for line in listed.stdout.splitlines())
            if mode == "1" and session == "_kronii_control"]  # fmt: skip


def test_triggers_in_the_first_second_after_a_sigkill_restart_reach_the_live_pane(
    infra: InfraUrls, migrated_database: str, tmp_path: Path
) -> None:
    folder, submits = tmp_path / "sup", tmp_path / "submits.jsonl"
    folder.mkdir()
    answers: list[dict[str, Any]] = []
    prompts: list[str] = []
    with private_socket() as socket:
        with start_supervisor(
            infra, migrated_database, folder, socket, settings=_settings(), redis_db=13
        ) as first:
            ports = (int(first.url.rsplit(":", 1)[1]), first.grpc_port)
            spawned = first.spawn(AGENT, kind="paneonly", workspace=WORKSPACE,
                                  command=["env", f"FAKE_CODEX_LOG={submits}", sys.executable, str(FAKE_CODEX)])  # fmt: skip
            runtime_id, agent_pid = spawned["runtime"]["runtime_id"], spawned["runtime"]["pid"]
            wait_ready_pane(first, runtime_id)
            first.proc.process.kill()  # SIGKILL: no shutdown code runs; the pane lives on
            first.proc.process.wait(10)
        with start_supervisor(
            infra, migrated_database, folder, socket, settings=_settings(), redis_db=13, ports=ports
        ) as second:
            # In the first second after /readyz said ready: three triggers, 0.3 s apart.
            ready_at = time.monotonic()
            threads = []
            for index in range(3):
                prompts.append(f"right after the restart {index}")
                threads.append(_fire(second.url, prompts[-1], answers))
                time.sleep(0.3)
            assert time.monotonic() - ready_at < 1.0, "all three were sent within the first second"
            for thread in threads:
                thread.join(60)
            # A trigger sent right after the control client is killed (none in flight meanwhile:
            # a connection lost in the middle of a write is another matter) opens the connection
            # again under it, while the reconcile loop asks about the same pane.
            for index in range(6):
                for pid in _control_clients(socket):
                    os.kill(pid, signal.SIGKILL)
                prompts.append(f"while tmux reconnects {index}")
                _fire(second.url, prompts[-1], answers).join(60)
            finals = [_final(second, answer) for answer in answers]
            with second.client() as http:
                runtime = http.get(f"/v1/runtimes/{runtime_id}").json()
            output = second.proc.output
    assert len(answers) == len(prompts) and all(answer["status"] == 200 for answer in answers), answers
    for outcome in finals:
        why = (outcome.get("error_code"), outcome.get("detail"), outcome.get("fallback_chain"))
        assert outcome["result"] == "delivered" and outcome["delivery_backend"] == "tmux", (
            why,
            output[-3000:],
        )
    assert runtime["status"] != "offline" and runtime["pid"] == agent_pid, runtime
    taken = [entry["prompt"] for entry in read_jsonl(submits)]
    assert sorted(taken) == sorted(prompts), "each prompt typed into the live pane exactly once"
