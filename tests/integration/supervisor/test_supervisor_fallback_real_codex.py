"""The fallback chain on the real Codex CLI, in the agent's own world (issue 28). The supervisor runs
with a HOME of its own (and CODEX_HOME, XDG_* under it: a person's real config) and the fake Codex
first on its PATH; the agent runs with another HOME, a private CODEX_HOME and the real Codex on its
PATH, all given at spawn. A deferred trigger that falls back to a fresh session must start the real
Codex in the agent's CODEX_HOME and directory, write nothing under the supervisor's HOME, and leave
the replaced runtime `superseded` while it runs. A fresh session that stops at Codex's sign-in
screen (a CODEX_HOME without a login) is SPAWN_FAILED, naming what it showed, never delivered."""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.agents.harness import AttachedClient, private_socket
from tests.agents.real_codex import (
    CODEX_BIN,
    CODEX_BIN_DIR,
    codex_env,
    history,
    prepare_codex_home,
    stop_codex_daemons,
)
from tests.agents.refusing_model import refusing_model_server
from tests.infra import InfraUrls
from tests.integration.supervisor.conftest import Supervisor, start_supervisor

# Where a person keeps their own agent config: what the supervisor's environment points at.
PERSONAL = (
    ("CODEX_HOME", ".codex"),
    ("XDG_CONFIG_HOME", ".config"),
    ("XDG_DATA_HOME", ".local/share"),
    ("XDG_STATE_HOME", ".local/state"),
    ("XDG_CACHE_HOME", ".cache"),
    ("CLAUDE_CONFIG_DIR", ".claude"),
)


@dataclass
class Worlds:
    supervisor_home: Path
    agent_home: Path
    project: Path
    codex_home: Path
    logged_out_home: Path
    base_url: str

    def agent_env(self, codex_home: Path, *, key: bool) -> dict[str, str]:
        """The agent's whole environment: its HOME, its CODEX_HOME, the real Codex first on PATH."""
        env = codex_env({"CODEX_HOME": str(codex_home)})
        for name, _ in PERSONAL:
            if name != "CODEX_HOME":
                env.pop(name, None)
        env.update(
            HOME=str(self.agent_home), PATH=f"{CODEX_BIN_DIR}:{os.environ.get('PATH', '/usr/bin:/bin')}"
        )
        if key:
            env["OPENAI_API_KEY"] = "sk-kronii-test-not-a-real-key"
        return env


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Worlds]:
    folder = tmp_path_factory.mktemp("worlds")
    project = folder / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    supervisor_home, agent_home = folder / "supervisor-home", folder / "agent-home"
    supervisor_home.mkdir()
    agent_home.mkdir()
    with refusing_model_server() as base_url:
        codex_home = Path(
            prepare_codex_home(folder / "codex-home", [project], base_url=base_url)["CODEX_HOME"]
        )
        # The same settings, never logged in: Codex opens on its sign-in screen.
        logged_out = folder / "logged-out-home"
        logged_out.mkdir(mode=0o700)
        (logged_out / "config.toml").write_text((codex_home / "config.toml").read_text(encoding="utf-8"))
        try:
            yield Worlds(supervisor_home, agent_home, project, codex_home, logged_out, base_url)
        finally:
            stop_codex_daemons(codex_home)
            stop_codex_daemons(logged_out)


@pytest.fixture(scope="module")
def supervisor(
    infra: InfraUrls, migrated_database: str, tmp_path_factory: pytest.TempPathFactory, worlds: Worlds
) -> Iterator[Supervisor]:
    """The supervisor in its own world: its HOME, a CODEX_HOME and XDG folders under it (none of
    which exist), no OpenAI key; the fake Codex first on its PATH (start_supervisor puts it there)."""
    home = worlds.supervisor_home
    env = {"HOME": str(home), "OPENAI_API_KEY": ""}
    env.update({name: str(home / where) for name, where in PERSONAL})
    folder = tmp_path_factory.mktemp("sup")
    with (
        private_socket() as socket,
        start_supervisor(infra, migrated_database, folder, socket, extra_env=env) as sup,
    ):
        yield sup


def _eventually(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def _runtime(sup: Supervisor, runtime_id: str) -> dict[str, Any]:
    with sup.client() as http:
        body: dict[str, Any] = http.get(f"/v1/runtimes/{runtime_id}").json()
    return body


def _spawn_codex(sup: Supervisor, workspace: str, env: dict[str, str], cwd: Path) -> dict[str, Any]:
    """The agent as a person gives it its world at spawn: `env -i K=V... codex`."""
    agent = f"codex-{uuid.uuid4().hex[:6]}"
    command = ["env", "-i", *(f"{k}={v}" for k, v in env.items()), str(CODEX_BIN)]
    with sup.client() as http:
        response = http.post("/v1/runtimes/spawn", json={
            "workspace_id": workspace, "agent_id": agent, "role": "coder", "kind": "codex",
            "command": command, "cwd": str(cwd),
        })  # fmt: skip
    assert response.status_code == 201, response.text
    runtime: dict[str, Any] = response.json()["runtime"]
    return runtime


def _attached(sup: Supervisor, session: str) -> bool:
    done = subprocess.run(["tmux", "-S", sup.socket, "list-clients", "-t", session, "-F", "#{client_tty}"],
                          capture_output=True, text=True, check=False)  # fmt: skip
    return bool(done.stdout.strip())


def _environ(pid: int) -> dict[str, str]:
    """The environment of the agent process that runs as `pid` (the Codex node script)."""
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    return dict(item.decode().partition("=")[::2] for item in raw.split(b"\0") if b"=" in item)


def _created_under(home: Path) -> list[str]:
    return sorted(str(path.relative_to(home)) for path in home.rglob("*"))


def _final(sup: Supervisor, trigger_id: str, timeout: float) -> dict[str, Any]:
    outcome: dict[str, Any] = {}

    def done() -> bool:
        outcome.update(sup.get_trigger(trigger_id))
        return outcome.get("result") not in (None, "", "deferred")

    _eventually(done, timeout, f"trigger {trigger_id}'s final outcome")
    return outcome


def test_a_deferred_trigger_on_real_codex_falls_back_to_a_fresh_session_in_the_agents_codex_home(
    supervisor: Supervisor, worlds: Worlds
) -> None:
    old = _spawn_codex(supervisor, "fbw1", worlds.agent_env(worlds.codex_home, key=True), worlds.project)
    _eventually(lambda: _runtime(supervisor, old["runtime_id"])["agent_state"] == "idle", 40, "Codex idle")
    person = AttachedClient(supervisor.socket, "agents_fbw1", window="coder")
    try:
        _eventually(lambda: _attached(supervisor, "agents_fbw1"), 10, "the person's client attached")
        person.type("half a thought", gap=0.05)
        # Real Codex on a loaded machine (the whole suite on two cores) can take seconds to echo the keys.
        _eventually(
            lambda: _runtime(supervisor, old["runtime_id"])["agent_state"] == "draft", 30, "the draft"
        )
        prompt = f"fallback world check {uuid.uuid4().hex[:6]}"
        first = supervisor.trigger(old["agent_id"], prompt, workspace="fbw1")
        assert first["result"] == "deferred" and first["error_code"] == "OPERATOR_BUSY", first
        final = _final(supervisor, first["trigger_id"], 60)
    finally:
        person.close()
    assert final["result"] == "delivered" and final["delivery_backend"] == "spawn", final
    assert final["fallback_chain"][-1] == "spawn" and final["runtime_id"] != old["runtime_id"], final
    assert "in the agent's environment: its process" in final["detail"], final["detail"]

    # The real Codex took it, in the agent's CODEX_HOME (the fake one on the supervisor's PATH did not).
    _eventually(
        lambda: prompt in [e["text"] for e in history(worlds.codex_home)], 30, "the prompt in history"
    )
    assert not any(prompt in str(entry.get("argv")) for entry in supervisor.launches())
    new = _runtime(supervisor, final["runtime_id"])
    env = _environ(new["pid"])
    assert env["CODEX_HOME"] == str(worlds.codex_home) and env["HOME"] == str(worlds.agent_home)
    assert not {"XDG_CONFIG_HOME", "XDG_DATA_HOME", "CLAUDE_CONFIG_DIR"} & set(env), (
        "nothing of the supervisor's"
    )
    assert env["KRONII_RUNTIME_ID"] == new["runtime_id"] and new["cwd"] == str(worlds.project)

    # The replaced Codex still runs, with the person's draft: superseded, across reconcile passes.
    assert _runtime(supervisor, old["runtime_id"])["status"] == "superseded"
    _eventually(lambda: 'kronii_supervisor_runtimes{status="superseded"} 1.0' in supervisor.metrics(), 10,
                "a reconcile pass that counts it superseded")  # fmt: skip
    still = _runtime(supervisor, old["runtime_id"])
    assert still["status"] == "superseded" and still["offline_reason"] == f"superseded by {new['runtime_id']}"
    with supervisor.client() as http:
        listed = http.get("/v1/runtimes", params={"workspace_id": "fbw1"}).json()["runtimes"]
    assert {(r["runtime_id"], r["status"]) for r in listed} >= {(old["runtime_id"], "superseded")}

    # The next trigger goes to the fresh session, never the superseded one.
    _eventually(
        lambda: _runtime(supervisor, new["runtime_id"])["agent_state"] == "idle", 40, "the new Codex idle"
    )
    second = supervisor.trigger(old["agent_id"], "and one more", workspace="fbw1")
    assert second["result"] == "delivered" and second["runtime_id"] == new["runtime_id"], second

    # Nothing was written under the supervisor's HOME: no .codex, no .claude.json, no config at all.
    assert _created_under(worlds.supervisor_home) == []

    # Its process ends: offline only now.
    os.kill(old["pid"], 9)
    _eventually(
        lambda: _runtime(supervisor, old["runtime_id"])["status"] == "offline", 10, "offline at its end"
    )


def test_a_fresh_real_codex_at_its_sign_in_screen_is_spawn_failed_not_delivered(
    supervisor: Supervisor, worlds: Worlds
) -> None:
    env = worlds.agent_env(worlds.logged_out_home, key=False)
    old = _spawn_codex(supervisor, "fbw2", env, worlds.project)
    _eventually(
        lambda: _runtime(supervisor, old["runtime_id"])["agent_state"] == "blocked", 40, "the sign-in"
    )
    with supervisor.client() as http:
        http.post(f"/v1/runtimes/{old['runtime_id']}/deregister", json={"reason": "test: agent gone"})

    outcome = supervisor.trigger(old["agent_id"], "are you signed in", workspace="fbw2")

    assert outcome["result"] == "failed" and outcome["error_code"] == "SPAWN_FAILED", outcome
    assert outcome["fallback_chain"][-1] == "spawn:failed", outcome
    detail = outcome["detail"]
    assert detail.startswith("spawn failed: codex stopped at a dialog"), detail
    assert "Welcome to Codex" in detail or "Sign in" in detail, detail
    assert not history(worlds.logged_out_home), "the prompt was never taken"
    # The failed window is left on screen for a person to read, still at its sign-in.
    panes = subprocess.run(
        ["tmux", "-S", supervisor.socket, "list-panes", "-s", "-t", "agents_fbw2", "-F", "#{pane_pid}"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    fresh = [int(pid) for pid in panes if int(pid) != old["pid"]]
    assert len(fresh) == 1 and _environ(fresh[0])["CODEX_HOME"] == str(worlds.logged_out_home)
    assert _created_under(worlds.supervisor_home) == []
