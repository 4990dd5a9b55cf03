"""The seed's pilot (seed 002, section 20.5) on real programs: a supervisor process with its
orchestrator, real tmux, and two line-reading agents (tests/agents/thread_agent.py) that read and
answer their thread with the real `kronii thread` CLI and the token the supervisor gave them. A person
posts a task; the executioner is woken, posts a result; the reviewer is woken, posts a finding; the
executioner is woken again, posts a fix; the reviewer is woken, resolves it. Nobody calls the trigger
API: every wake is the orchestrator's. Then: a person typing in the reviewer's pane defers its wake
and nothing is merged into their line; and kill -9 of the orchestrator mid-wake, restarted, wakes
each agent once."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.agents.harness import AttachedClient, private_socket
from tests.infra import InfraUrls
from tests.integration.supervisor.conftest import SETTINGS, Supervisor, eventually, start_supervisor, token

# The person, as `kronii` on the supervisor's host names them.
PERSON = "cli:tester"
THREAD_AGENT = Path(__file__).parents[2] / "agents" / "thread_agent.py"
PILOT = {
    **SETTINGS,
    "KRONII_SUPERVISOR_ORCHESTRATOR_SWEEP_SECS": "0.5",
    "KRONII_SUPERVISOR_QUIET_WINDOW_SECS": "1.5",
    "KRONII_SUPERVISOR_MAX_DEFER_SECS": "30",
    "KRONII_SUPERVISOR_ACK_TIMEOUT_SECS": "10",
}


class Pilot:
    def __init__(self, supervisor: Supervisor, workspace: str) -> None:
        self.sup = supervisor
        self.workspace = workspace
        self.runtimes: dict[str, str] = {}

    def spawn(self, name: str, role: str, delay: float = 0.0) -> None:
        env_delay = ["env", f"THREAD_AGENT_DELAY={delay}"] if delay else []
        runtime = self.sup.spawn(
            name, kind="generic", workspace=self.workspace, role=name,
            command=[*env_delay, sys.executable, str(THREAD_AGENT), role, name],
        )["runtime"]  # fmt: skip
        self.runtimes[name] = runtime["runtime_id"]
        eventually(lambda: f"{role}> " in self.pane(name), 15, f"{name}'s prompt")
        # The supervisor has read the agent's own screen (its idle screen) before anyone types.
        eventually(lambda: self.state(name) == "idle", 10, f"{name} read as idle")

    def state(self, name: str) -> str:
        with self.sup.client(token(PERSON)) as http:
            answer: dict[str, Any] = http.get(f"/v1/runtimes/{self.runtimes[name]}").json()
        return str(answer.get("agent_state", ""))

    def pane(self, name: str) -> str:
        done = subprocess.run(
            ["tmux", "-S", self.sup.socket, "capture-pane", "-p", "-J", "-S", "-200",
             "-t", f"=agents_{self.workspace}:={name}"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        return done.stdout

    def post(self, thread: str, body: str, *, to: str, kind: str = "message") -> dict[str, Any]:
        with self.sup.client(token(PERSON)) as http:
            response = http.post("/v1/threads/messages", json={
                "workspace_id": self.workspace, "thread_id": thread, "to": [to], "kind": kind, "body": body})  # fmt: skip
        assert response.status_code == 201, response.text
        answer: dict[str, Any] = response.json()
        return answer

    def messages(self, thread: str) -> list[dict[str, Any]]:
        with self.sup.client(token(PERSON)) as http:
            response = http.post("/v1/threads/read", json={
                "workspace_id": self.workspace, "thread_id": thread, "all": True, "peek": True, "limit": 500})  # fmt: skip
        if response.status_code == 404:
            return []
        assert response.status_code == 200, response.text
        found: list[dict[str, Any]] = response.json().get("messages", [])
        return found

    def turns(self, thread: str) -> list[tuple[str, str]]:
        return [(m["author"], m.get("kind", "message")) for m in self.messages(thread)
                if m.get("kind", "message") not in ("outcome", "sync")]  # fmt: skip

    def notes(self, thread: str) -> list[str]:
        return [m["body"] for m in self.messages(thread) if m.get("kind") == "outcome"]


@pytest.fixture(scope="module")
def pilot_supervisor(
    infra: InfraUrls, migrated_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Supervisor]:
    folder = tmp_path_factory.mktemp("orchestrator-pilot")
    with (
        private_socket() as socket,
        start_supervisor(infra, migrated_database, folder, socket, settings=PILOT) as sup,
    ):
        yield sup


def test_pilot_executioner_and_reviewer_are_woken_by_the_orchestrator_until_the_finding_is_resolved(
    pilot_supervisor: Supervisor,
) -> None:
    pilot = Pilot(pilot_supervisor, f"pilot{uuid.uuid4().hex[:6]}")
    pilot.spawn("executioner", "executioner")
    pilot.spawn("reviewer", "reviewer")

    pilot.post("task-1", "handle the empty input in parse()", to="executioner")

    expected = [("person", "message"), ("executioner", "result"), ("reviewer", "finding"),
                ("executioner", "result"), ("reviewer", "resolved")]  # fmt: skip
    eventually(lambda: pilot.turns("task-1") == expected, 60, f"the pilot's turns {expected}")
    notes = eventually(
        lambda: [n for n in pilot.notes("task-1") if n.startswith("woke ")][3:] and
        [n for n in pilot.notes("task-1") if n.startswith("woke ")], 10, "the four wake notes",
    )  # fmt: skip
    woken = sorted(note.split(":")[0] for note in notes)
    assert woken == ["woke executioner", "woke executioner", "woke reviewer", "woke reviewer"], notes
    assert all("delivered" in note for note in notes), notes
    # Each wake went into the agent's own input line, once.
    assert pilot.pane("reviewer").count("[kronii] thread task-1:") == 2
    assert pilot.pane("executioner").count("[kronii] thread task-1:") == 2
    # Once resolved, nobody is woken again (the resolution is for the person, who has no pane).
    time.sleep(1.5)
    assert len([n for n in pilot.notes("task-1") if n.startswith("woke ")]) == 4


def test_a_person_typing_in_the_reviewers_pane_defers_its_wake_and_nothing_is_merged(
    pilot_supervisor: Supervisor,
) -> None:
    pilot = Pilot(pilot_supervisor, f"pilot{uuid.uuid4().hex[:6]}")
    pilot.spawn("reviewer", "reviewer")
    person = AttachedClient(pilot.sup.socket, f"agents_{pilot.workspace}", window="reviewer")
    try:
        person.type("my own note")
        eventually(lambda: "reviewer> my own note" in pilot.pane("reviewer"), 5, "the person's draft")

        pilot.post("task-2", "done: the parser change", to="reviewer", kind="result")

        deferred = eventually(
            lambda: [n for n in pilot.notes("task-2") if "deferred" in n], 10, "the deferral note"
        )
        assert "a person is typing" in deferred[0]
        # Section 13.2: the person's work in the pane is noted for the thread before it goes on.
        assert any(m.get("kind") == "sync" for m in pilot.messages("task-2"))
        assert "reviewer> my own note" in pilot.pane("reviewer")
        assert "[kronii]" not in pilot.pane("reviewer")

        person.type("\r")
        eventually(
            lambda: "(not for me: my own note)" in pilot.pane("reviewer"), 5, "the person's line, alone"
        )
        eventually(
            lambda: [n for n in pilot.notes("task-2") if n.startswith("woke reviewer")], 30, "the wake"
        )
        eventually(lambda: ("reviewer", "finding") in pilot.turns("task-2"), 10, "the reviewer's finding")
        assert pilot.pane("reviewer").count("[kronii] thread task-2:") == 1
        assert "my own note[kronii]" not in pilot.pane("reviewer")
        assert "[kronii]my own note" not in pilot.pane("reviewer")
    finally:
        person.close()


def test_kill_9_of_the_orchestrator_mid_wake_then_restart_wakes_each_agent_once(
    infra: InfraUrls, migrated_database: str, tmp_path: Path
) -> None:
    workspace = f"pilot{uuid.uuid4().hex[:6]}"
    with private_socket() as socket:
        first = start_supervisor(infra, migrated_database, tmp_path, socket, settings=PILOT, redis_db=15)
        sup = first.__enter__()
        ports = (int(sup.url.rsplit(":", 1)[1]), sup.grpc_port)
        pilot = Pilot(sup, workspace)
        # It reads its thread 3 s after the wake is typed: the supervisor is killed in that window.
        pilot.spawn("reviewer", "reviewer", delay=3.0)
        pilot.post("task-3", "done: the parser change", to="reviewer", kind="result")
        eventually(lambda: "[kronii] thread task-3:" in pilot.pane("reviewer"), 10, "the wake typed")
        os.kill(sup.proc.process.pid, signal.SIGKILL)
        sup.proc.process.wait(10)
        with contextlib.suppress(Exception):
            first.__exit__(None, None, None)

        with start_supervisor(infra, migrated_database, tmp_path, socket, settings=PILOT, ports=ports,
                              redis_db=15) as again:  # fmt: skip
            pilot.sup = again
            eventually(lambda: ("reviewer", "finding") in pilot.turns("task-3"), 30, "the reviewer's finding")
            time.sleep(2.0)  # two sweeps of the restarted orchestrator: nothing is woken twice
            assert pilot.pane("reviewer").count("[kronii] thread task-3:") == 1
            assert pilot.turns("task-3").count(("reviewer", "finding")) == 1


def test_a_person_typing_in_one_agents_window_does_not_hold_the_other_agents_of_the_workspace(
    pilot_supervisor: Supervisor,
) -> None:
    # Agents of a workspace share a tmux session, a window each: a person's keys go to the pane
    # they look at, and only that pane counts them.
    pilot = Pilot(pilot_supervisor, f"pilot{uuid.uuid4().hex[:6]}")
    pilot.spawn("executioner", "executioner")
    pilot.spawn("reviewer", "reviewer")
    person = AttachedClient(pilot.sup.socket, f"agents_{pilot.workspace}", window="executioner")
    try:
        person.type("half a thought")
        eventually(lambda: "executioner> half a thought" in pilot.pane("executioner"), 5, "the draft")
        pilot.post("task-4", "done: the parser change", to="reviewer", kind="result")
        notes = eventually(lambda: pilot.notes("task-4"), 10, "the wake's outcome")
        assert notes[0].startswith("woke reviewer: delivered"), notes
        assert "executioner> half a thought" in pilot.pane("executioner")
        assert "[kronii]" not in pilot.pane("executioner")
    finally:
        person.close()


def test_two_agents_spawned_at_once_into_a_new_workspace_both_start(pilot_supervisor: Supervisor) -> None:
    workspace = f"pilot{uuid.uuid4().hex[:6]}"
    with ThreadPoolExecutor(2) as pool:
        started = list(pool.map(lambda name: Pilot(pilot_supervisor, workspace).sup.spawn(
            name, kind="generic", workspace=workspace, command=[sys.executable, "-q", "-i"]), ["a1", "a2"]))  # fmt: skip
    assert sorted(s["runtime"]["agent_id"] for s in started) == ["a1", "a2"]
