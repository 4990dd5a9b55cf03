"""The orchestrator wakes a real agent CLI: the pinned Codex, offline (its model endpoint refuses at
once), in a pane the supervisor started. A message on a thread addressed to it is typed into
Codex's own input by the orchestrator, once: Codex's `history.jsonl` (one entry per prompt it took)
has the wake, and the thread has the delivered outcome. Codex cannot answer
offline, so its message stays unread: later passes of the orchestrator do not wake it again."""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agents.harness import private_socket
from tests.agents.real_codex import CODEX_BIN, history, prepare_codex_home
from tests.agents.refusing_model import refusing_model_server
from tests.infra import InfraUrls
from tests.integration.supervisor.conftest import Supervisor, eventually, start_supervisor, token

SETTINGS = {
    "KRONII_SUPERVISOR_QUIET_WINDOW_SECS": "3",
    "KRONII_SUPERVISOR_RECHECK_SECS": "0.5",
    "KRONII_SUPERVISOR_RECONCILE_INTERVAL_SECS": "0.5",
    "KRONII_SUPERVISOR_ORCHESTRATOR_SWEEP_SECS": "0.5",
}


@pytest.fixture(scope="module")
def codex_world(
    infra: InfraUrls, migrated_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Supervisor, Path, Path]]:
    folder = tmp_path_factory.mktemp("orchestrated-codex")
    project = folder / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    with refusing_model_server() as base_url:
        env = prepare_codex_home(folder / "home", trusted=[project], base_url=base_url)
        with (
            private_socket() as socket,
            start_supervisor(
                infra, migrated_database, folder, socket, settings=SETTINGS, extra_env=env
            ) as sup,
        ):
            yield sup, Path(env["CODEX_HOME"]), project


def test_a_message_for_a_real_codex_is_typed_into_its_own_input_once(
    codex_world: tuple[Supervisor, Path, Path],
) -> None:
    sup, codex_home, project = codex_world
    workspace, agent = f"cx{uuid.uuid4().hex[:6]}", "codex-reviewer"
    with sup.client() as http:
        spawned = http.post("/v1/runtimes/spawn", json={
            "workspace_id": workspace, "agent_id": agent, "role": "review", "kind": "codex",
            "command": [str(CODEX_BIN)], "cwd": str(project)})  # fmt: skip
        assert spawned.status_code == 201, spawned.text
        runtime_id = spawned.json()["runtime"]["runtime_id"]
        eventually(lambda: http.get(f"/v1/runtimes/{runtime_id}").json()["agent_state"] == "idle", 60,
                   "Codex on its main screen")  # fmt: skip

    person = token("cli:tester")
    with sup.client(person) as http:
        posted = http.post("/v1/threads/messages", json={
            "workspace_id": workspace, "thread_id": "review-codex", "to": [agent], "kind": "result",
            "body": "done: parse() handles the empty input; please review"})  # fmt: skip
        assert posted.status_code == 201, posted.text

        def notes() -> list[str]:
            answer = http.post("/v1/threads/read", json={
                "workspace_id": workspace, "thread_id": "review-codex", "all": True, "peek": True}).json()  # fmt: skip
            return [m["body"] for m in answer["messages"] if m.get("kind") == "outcome"]

        woke = eventually(notes, 60, "the wake's outcome on the thread")
        assert len(woke) == 1 and woke[0].startswith(f"woke {agent}: delivered (tmux; acknowledged by")
        # Codex writes its history file after it takes the prompt, so on a loaded machine the entry can
        # follow the acknowledgement by a moment.
        took = eventually(
            lambda: [
                e["text"]
                for e in history(codex_home)
                if "[kronii] thread review-codex:" in str(e.get("text"))
            ],
            20,
            "the prompt in Codex's history",
        )
        assert len(took) == 1 and took[0].startswith("[kronii] thread review-codex: 1 new for you: #1 person")
        assert "please review" in took[0] and took[0].endswith("TEXT")
        time.sleep(2.0)  # four sweeps: the unread message does not wake Codex again
        assert notes() == woke
        assert len([e for e in history(codex_home) if "[kronii] thread" in str(e.get("text"))]) == 1
