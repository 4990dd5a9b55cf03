"""The supervisor against the real Codex CLI (the npm package the project's setup installs, pinned),
run offline with a dummy key in a private CODEX_HOME, its project folder trusted by the fixture.
What Codex took is read from its own records (`history.jsonl`, one entry per submitted message)
and its screen, never from the supervisor's answer."""

from __future__ import annotations

import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.agents.harness import AttachedClient, private_socket
from tests.agents.real_codex import CODEX_BIN, history, prepare_codex_home
from tests.agents.refusing_model import refusing_model_server
from tests.infra import InfraUrls
from tests.integration.supervisor.conftest import Supervisor, start_supervisor


@dataclass
class RealCodex:
    home: Path
    project: Path
    untrusted: Path
    env: dict[str, str]

    def texts(self) -> list[str]:
        return [str(entry["text"]) for entry in history(self.home)]


@pytest.fixture(scope="module")
def real_codex(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealCodex]:
    folder = tmp_path_factory.mktemp("codex")
    project, untrusted = folder / "project", folder / "untrusted"
    for path in (project, untrusted):
        path.mkdir()
        subprocess.run(["git", "init", "-q", str(path)], check=True)
    with refusing_model_server() as base_url:
        env = prepare_codex_home(folder / "home", trusted=[project], base_url=base_url)
        yield RealCodex(Path(env["CODEX_HOME"]), project, untrusted, env)


def _supervisor(
    infra: InfraUrls, database: str, folder: Path, codex: RealCodex, settings: dict[str, str]
) -> Iterator[Supervisor]:
    with (
        private_socket() as socket,
        start_supervisor(infra, database, folder, socket, settings=settings, extra_env=codex.env) as sup,
    ):
        yield sup


@pytest.fixture(scope="module")
def defaults(
    infra: InfraUrls, migrated_database: str, tmp_path_factory: pytest.TempPathFactory, real_codex: RealCodex
) -> Iterator[Supervisor]:
    """Nothing of the supervisor's configured: the defaults a new user gets."""
    yield from _supervisor(infra, migrated_database, tmp_path_factory.mktemp("sup"), real_codex, {})


@pytest.fixture(scope="module")
def brisk(
    infra: InfraUrls, migrated_database: str, tmp_path_factory: pytest.TempPathFactory, real_codex: RealCodex
) -> Iterator[Supervisor]:
    """The defaults but a 3 s quiet window and quicker looks, so a test waits seconds, not minutes."""
    settings = {
        "KRONII_SUPERVISOR_QUIET_WINDOW_SECS": "3",
        "KRONII_SUPERVISOR_RECHECK_SECS": "0.5",
        "KRONII_SUPERVISOR_MAX_DEFER_SECS": "40",
        "KRONII_SUPERVISOR_RECONCILE_INTERVAL_SECS": "0.5",
        "KRONII_SUPERVISOR_RATE_LIMIT": "0",
    }
    yield from _supervisor(infra, migrated_database, tmp_path_factory.mktemp("sup"), real_codex, settings)


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


def _start_codex(
    sup: Supervisor, codex: RealCodex, workspace: str, *, cwd: Path | None = None
) -> dict[str, Any]:
    agent = f"codex-{uuid.uuid4().hex[:6]}"
    with sup.client() as http:
        response = http.post("/v1/runtimes/spawn", json={
            "workspace_id": workspace, "agent_id": agent, "role": "coder", "kind": "codex",
            "command": [str(CODEX_BIN)], "cwd": str(cwd or codex.project),
        })  # fmt: skip
    assert response.status_code == 201, response.text
    runtime: dict[str, Any] = response.json()["runtime"]
    return runtime


def _wait_state(sup: Supervisor, runtime_id: str, state: str, timeout: float = 40) -> None:
    _eventually(
        lambda: _runtime(sup, runtime_id)["agent_state"] == state, timeout, f"the agent to be {state}"
    )


def _screen(sup: Supervisor, pane: str) -> str:
    done = subprocess.run(["tmux", "-S", sup.socket, "capture-pane", "-p", "-t", pane],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return done.stdout


def _trigger(sup: Supervisor, agent: str, workspace: str, prompt: str) -> dict[str, Any]:
    return sup.trigger(agent, prompt, workspace=workspace)


FIFTEEN_LINES = "\n".join(
    [f"Step {n}: look at module_{n}.py and list what its tests do not cover" for n in range(1, 15)]
    + ["Then write one sentence per module, nothing else."]
)


def test_real_codex_with_default_settings_takes_a_one_line_and_a_15_line_prompt(
    defaults: Supervisor, real_codex: RealCodex
) -> None:
    runtime = _start_codex(defaults, real_codex, "real1")
    _wait_state(defaults, runtime["runtime_id"], "idle")
    agent = runtime["agent_id"]
    one = _trigger(defaults, agent, "real1", "list the files in this folder")
    assert one["result"] == "delivered" and one["delivery_backend"] == "tmux", one
    assert one["runtime_id"] == runtime["runtime_id"] and one["acked_by"] in ("output", "history")
    _eventually(lambda: "list the files in this folder" in real_codex.texts(), 30, "Codex's history entry")
    # Codex answered with its error (no model offline) and is ready for the next one.
    _wait_state(defaults, runtime["runtime_id"], "idle")
    fifteen = _trigger(defaults, agent, "real1", FIFTEEN_LINES)
    assert fifteen["result"] == "delivered" and fifteen["delivery_backend"] == "tmux", fifteen
    _eventually(lambda: FIFTEEN_LINES in real_codex.texts(), 30, "the 15-line prompt as one history entry")
    assert real_codex.texts().count(FIFTEEN_LINES) == 1
    assert "list the files in this folder" not in [
        t for t in real_codex.texts() if t != "list the files in this folder"
    ]


def test_real_codex_with_a_person_typing_in_a_second_client_defers_and_never_touches_the_draft(
    brisk: Supervisor, real_codex: RealCodex
) -> None:
    runtime = _start_codex(brisk, real_codex, "real2")
    _wait_state(brisk, runtime["runtime_id"], "idle")
    person = AttachedClient(brisk.socket, "agents_real2", window="coder")
    try:
        time.sleep(0.5)
        person.type("fix the login bug", gap=0.05)
        _wait_state(brisk, runtime["runtime_id"], "draft", timeout=10)
        outcome = _trigger(brisk, runtime["agent_id"], "real2", "run the supervisor case four")
        assert outcome["result"] == "deferred" and outcome["error_code"] == "OPERATOR_BUSY", outcome
        time.sleep(4)  # past the quiet window: the draft still sits there, so it still waits
        screen = _screen(brisk, runtime["pty_target"])
        assert "fix the login bug" in screen and "run the supervisor case four" not in screen
        assert brisk.get_trigger(outcome["trigger_id"])["result"] == "deferred"
        person.type("\r")  # the person sends their own message
        _eventually(lambda: "fix the login bug" in real_codex.texts(), 20, "the person's own message")
        try:
            _eventually(lambda: brisk.get_trigger(outcome["trigger_id"])["result"] == "delivered", 30,
                        "the trigger after the quiet window")  # fmt: skip
        except AssertionError:
            raise AssertionError(
                (
                    brisk.get_trigger(outcome["trigger_id"]),
                    _screen(brisk, runtime["pty_target"]),
                    _runtime(brisk, runtime["runtime_id"]),
                )
            ) from None
    finally:
        person.close()
    _eventually(lambda: "run the supervisor case four" in real_codex.texts(), 20, "the trigger's own entry")
    texts = real_codex.texts()
    assert texts.index("fix the login bug") < texts.index("run the supervisor case four")
    assert not any("fix the login bug" in t and "supervisor" in t for t in texts), "never merged"


def test_real_codex_at_its_trust_dialog_is_blocked_and_nothing_is_typed(
    brisk: Supervisor, real_codex: RealCodex
) -> None:
    runtime = _start_codex(brisk, real_codex, "real3", cwd=real_codex.untrusted)
    _wait_state(brisk, runtime["runtime_id"], "blocked")
    before = _screen(brisk, runtime["pty_target"])
    assert "Trust this folder?" in before
    outcome = _trigger(brisk, runtime["agent_id"], "real3", "please start")
    assert outcome["result"] == "deferred" and outcome["error_code"] == "AGENT_BLOCKED", outcome
    assert "Trust this folder?" in outcome["detail"]
    time.sleep(2)
    after = _screen(brisk, runtime["pty_target"])
    assert "Trust this folder?" in after and "please start" not in after
    assert "please start" not in real_codex.texts()
    assert _runtime(brisk, runtime["runtime_id"])["agent_state"] == "blocked"


PYTHON_STARTUP = """
import json as _json, os as _os
def seen(text):
    with open(_os.environ["SEEN_LOG"], "a") as f:
        f.write(_json.dumps(text) + "\\n")
"""


# In the slow suite: the default suite keeps the same property on the same real Codex
# (test_forty_triggers_at_once_into_one_real_codex_pane_are_forty_separate_messages) and the ordering of
# simultaneous triggers per pane in process (test_supervisor_concurrency's sixty triggers on two panes).
@pytest.mark.slow
def test_twenty_pairs_of_simultaneous_triggers_give_forty_separate_prompts_in_order(
    brisk: Supervisor, real_codex: RealCodex, tmp_path: Path
) -> None:
    codex_rt = _start_codex(brisk, real_codex, "real4")
    startup, seen_log = tmp_path / "startup.py", tmp_path / "seen.jsonl"
    startup.write_text(PYTHON_STARTUP)
    with brisk.client() as http:
        response = http.post("/v1/runtimes/spawn", json={
            "workspace_id": "real4", "agent_id": "py", "role": "py", "kind": "python",
            "command": ["env", f"PYTHONSTARTUP={startup}", f"SEEN_LOG={seen_log}", "python3", "-i", "-q"],
        })  # fmt: skip
    python_rt = response.json()["runtime"]
    _wait_state(brisk, codex_rt["runtime_id"], "idle")
    _wait_state(brisk, python_rt["runtime_id"], "idle")
    outcomes: list[dict[str, Any]] = []
    lock = threading.Lock()

    def send(agent: str, prompt: str) -> None:
        outcome = _trigger(brisk, agent, "real4", prompt)
        with lock:
            outcomes.append({**outcome, "prompt": prompt})

    with ThreadPoolExecutor(max_workers=4) as pool:
        for pair in range(20):
            # Two triggers to each pane at the same moment; the next pair once these are answered.
            futures = [
                pool.submit(send, codex_rt["agent_id"], f"pair {pair:02d} first"),
                pool.submit(send, codex_rt["agent_id"], f"pair {pair:02d} second"),
                pool.submit(send, "py", f'seen("pair {pair:02d} first")'),
                pool.submit(send, "py", f'seen("pair {pair:02d} second")'),
            ]
            for future in futures:
                future.result()
    assert len(outcomes) == 80
    assert {o["result"] for o in outcomes} == {"delivered"}, [
        o for o in outcomes if o["result"] != "delivered"
    ]
    expected_codex = {f"pair {p:02d} {w}" for p in range(20) for w in ("first", "second")}
    _eventually(lambda: expected_codex <= set(real_codex.texts()), 60, "every Codex prompt in its history")
    codex_texts = [t for t in real_codex.texts() if t.startswith("pair ")]
    assert sorted(codex_texts) == sorted(expected_codex), (
        "each prompt its own message, none mixed, none twice"
    )
    pairs = [int(t.split()[1]) for t in codex_texts]
    assert pairs == sorted(pairs), "pairs in order"
    _eventually(lambda: seen_log.exists() and len(seen_log.read_text().splitlines()) == 40, 20, "python's 40")
    import json

    python_texts = [json.loads(line) for line in seen_log.read_text().splitlines()]
    assert sorted(python_texts) == sorted(f"pair {p:02d} {w}" for p in range(20) for w in ("first", "second"))
    assert [int(t.split()[1]) for t in python_texts] == sorted(int(t.split()[1]) for t in python_texts)


def test_forty_triggers_at_once_into_one_real_codex_pane_are_forty_separate_messages(
    brisk: Supervisor, real_codex: RealCodex
) -> None:
    runtime = _start_codex(brisk, real_codex, "real5")
    _wait_state(brisk, runtime["runtime_id"], "idle")
    prompts = [f"crowd {i:02d} {uuid.uuid4().hex[:6]}" for i in range(40)]
    with ThreadPoolExecutor(max_workers=40) as pool:
        outcomes = list(pool.map(lambda p: _trigger(brisk, runtime["agent_id"], "real5", p), prompts))
    # Under load Codex may still show the last prompt in its box when the next trigger looks: the
    # supervisor cannot tell that from a person's draft and defers (OPERATOR_BUSY), the safe answer; a
    # deferred trigger is delivered once the box is clear. Anything else, or a mixed or repeated
    # message, fails.
    late = [o for o in outcomes if o["result"] != "delivered"]
    assert all(o["result"] == "deferred" and o.get("error_code") == "OPERATOR_BUSY" for o in late), late[:3]
    assert len(late) <= 4, f"{len(late)} of 40 deferred: {late[:3]}"
    _eventually(lambda: set(prompts) <= set(real_codex.texts()), 90, "every prompt in Codex's history")
    crowd = [t for t in real_codex.texts() if t.startswith("crowd ")]
    assert sorted(crowd) == sorted(prompts), "each its own message, none mixed, none twice"
