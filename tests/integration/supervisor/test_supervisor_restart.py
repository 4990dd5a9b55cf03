"""A supervisor killed with SIGKILL between typing a prompt and seeing it taken: the one that starts
next reports the trigger from the record (the bytes were written), never types it again and never
calls it failed, even when the client retries the same trigger_id."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from tests.agents.harness import private_socket
from tests.infra import InfraUrls
from tests.integration.supervisor.conftest import SETTINGS, start_supervisor, token

# A REPL that shows nothing of a line for 10 s after it read it (terminal echo off): the window in
# which the test kills the supervisor, after the bytes were written and before anything confirms them.
LATE_ECHO = """
import json, os, sys, termios, time
attrs = termios.tcgetattr(0)
attrs[3] &= ~termios.ECHO
termios.tcsetattr(0, termios.TCSANOW, attrs)
while True:
    sys.stdout.write(">>> ")
    sys.stdout.flush()
    line = sys.stdin.readline()
    if not line:
        break
    open(os.environ["GOT_FLAG"], "w").close()
    deadline = time.monotonic() + 30
    while not os.path.exists(os.environ["ECHO_FLAG"]) and time.monotonic() < deadline:
        time.sleep(0.05)  # the echo comes only once the test lets it: after the restart
    sys.stdout.write(line)
    with open(os.environ["SEEN_LOG"], "a") as f:
        f.write(json.dumps(line.strip()) + "\\n")
"""


def _settings() -> dict[str, str]:
    kinds = json.loads(SETTINGS["KRONII_SUPERVISOR_AGENT_KINDS"])
    kinds["lateecho"] = {
        "input_marker": ">>>",
        "submit_pause_secs": 0.02,
        "resume_argv": [],
        "spawn_argv": [],
    }
    return {**SETTINGS, "KRONII_SUPERVISOR_AGENT_KINDS": json.dumps(kinds)}


def _wait(check: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def test_sigkill_between_typing_and_ack_is_delivered_from_the_record_and_typed_once(
    infra: InfraUrls, migrated_database: str, tmp_path: Path
) -> None:
    program, seen_log, got = tmp_path / "late_echo.py", tmp_path / "seen.jsonl", tmp_path / "got"
    echo = tmp_path / "echo"
    program.write_text(LATE_ECHO)
    folder = tmp_path / "sup"
    folder.mkdir()
    headers = {"authorization": f"Bearer {token()}"}
    body = {"trigger_id": "t-crash-1", "agent_id": "py-crash", "workspace_id": "wscrash", "thread_id": "th-crash",
            "prompt": "typed before the crash", "ack_timeout_ms": 60000}  # fmt: skip
    answers: list[Any] = []
    with private_socket() as socket:
        with start_supervisor(
            infra, migrated_database, folder, socket, settings=_settings(), redis_db=15
        ) as first:
            with httpx.Client(base_url=first.url, headers=headers, timeout=60) as http:
                spawned = http.post("/v1/runtimes/spawn", json={
                    "workspace_id": "wscrash", "agent_id": "py-crash", "role": "py", "kind": "lateecho",
                    "command": ["env", f"GOT_FLAG={got}", f"ECHO_FLAG={echo}", f"SEEN_LOG={seen_log}", "python3", str(program)],
                })  # fmt: skip
                runtime_id = spawned.json()["runtime"]["runtime_id"]
                _wait(lambda: http.get(f"/v1/runtimes/{runtime_id}").json()["agent_state"] == "idle", 20,
                      "the REPL's prompt")  # fmt: skip

            def call() -> None:
                try:
                    answers.append(
                        httpx.post(f"{first.url}/v1/triggers", json=body, headers=headers, timeout=60)
                    )
                except httpx.HTTPError as error:
                    answers.append(error)

            caller = threading.Thread(target=call)
            caller.start()
            _wait(got.exists, 10, "the REPL to read the line")
            assert not seen_log.exists(), "nothing confirmed it yet"
            first.proc.process.kill()  # SIGKILL: no shutdown code runs
            first.proc.process.wait(10)
            caller.join(10)
        assert answers and isinstance(answers[0], httpx.HTTPError), "the first call never got an answer"
        with (
            start_supervisor(
                infra, migrated_database, folder, socket, settings=_settings(), redis_db=15
            ) as second,
            httpx.Client(base_url=second.url, headers=headers, timeout=60) as http,
        ):
            retry = http.post("/v1/triggers", json=body).json()
            assert retry["duplicate"] and retry["result"] in ("already_active", "delivered"), retry
            echo.touch()  # only now, with the second supervisor up, does the REPL echo the line it read

            def outcome() -> dict[str, Any]:
                answer: dict[str, Any] = http.get("/v1/triggers/t-crash-1").json()
                return answer

            _wait(lambda: outcome()["result"] == "delivered", 20, "the outcome from the record")
            final = outcome()
            assert final["acked_by"] == "record" and final["delivery_backend"] == "tmux", final
            time.sleep(1)
            again = http.post("/v1/triggers", json=body).json()
            assert again["result"] == "delivered" and again["duplicate"], again
    assert [json.loads(line) for line in seen_log.read_text().splitlines()] == ["typed before the crash"]
