"""A `python3 -i` agent in a real tmux pane, through the supervisor process, while it runs a line
(issue 26, item 3): the trigger that started the work is answered true (delivered: the REPL took
it), never an HTTP 500 and never a stray Enter; a trigger that arrives while it is busy waits
(AGENT_BUSY, not "a person's unsent text") and is delivered once the prompt is back; the next
trigger to the idle agent is delivered at once.

Every prompt the REPL shows is logged by its `sys.ps1` (PYTHONSTARTUP): each line the REPL reads,
an empty one from a stray Enter too, shows one more prompt."""

from __future__ import annotations

import json
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.integration.supervisor.conftest import Supervisor, wait_ready_pane

PROMPT_COUNTER = """
import json as _json, os as _os, sys as _sys
class _Prompt:
    def __str__(self):
        with open(_os.environ["PROMPTS_LOG"], "a") as f:
            f.write(_json.dumps(">>> ") + "\\n")
        return ">>> "
_sys.ps1 = _Prompt()
"""


def _eventually(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def _pane(supervisor: Supervisor, runtime_id: str) -> list[str]:
    with supervisor.client() as http:
        lines: list[str] = http.get(f"/v1/runtimes/{runtime_id}/logs", params={"lines": 200}).json()["lines"]
    return [line.rstrip() for line in lines if line.strip()]


def _prompts(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def _python_agent(supervisor: Supervisor, tmp_path: Path) -> tuple[str, dict[str, Any], Path]:
    startup, log = tmp_path / "startup.py", tmp_path / "prompts.jsonl"
    startup.write_text(PROMPT_COUNTER)
    agent = f"busy-{uuid.uuid4().hex[:6]}"
    command = ["env", f"PYTHONSTARTUP={startup}", f"PROMPTS_LOG={log}", sys.executable, "-i", "-q"]
    runtime: dict[str, Any] = supervisor.spawn(agent, kind="python", command=command)["runtime"]
    wait_ready_pane(supervisor, runtime["runtime_id"], ">>>")
    _eventually(lambda: _prompts(log) == 1, 5, "the first prompt")
    return agent, runtime, log


def test_a_busy_python_repl_gets_a_true_outcome_no_stray_enter_and_the_next_trigger_when_idle(
    supervisor: Supervisor, tmp_path: Path
) -> None:
    agent, runtime, log = _python_agent(supervisor, tmp_path)
    work = 'import time; time.sleep(3); print("done")'

    first = supervisor.trigger(agent, work)  # asserts HTTP 200 (never the 500 of issue 26)
    assert first["result"] == "delivered" and first["acked_by"] == "output", first
    assert first["typed_not_submitted"] is False and first["attempts"] == 1, first
    assert "done" not in _pane(supervisor, runtime["runtime_id"]), "answered while the line still runs"

    busy = supervisor.trigger(agent, 'print("while busy")')
    assert busy["result"] == "deferred" and busy["error_code"] == "AGENT_BUSY", busy
    assert "busy" in busy["detail"] and "unsent" not in busy["detail"], busy

    _eventually(lambda: supervisor.get_trigger(busy["trigger_id"])["result"] == "delivered", 15,
                "the waiting trigger to be delivered once the prompt is back")  # fmt: skip
    third = supervisor.trigger(agent, 'print("now idle")')
    assert third["result"] == "delivered" and third["attempts"] == 1, third

    _eventually(lambda: "now idle" in _pane(supervisor, runtime["runtime_id"]), 5, "the third line's output")
    lines = _pane(supervisor, runtime["runtime_id"])
    start = next(i for i, line in enumerate(lines) if line.startswith(">>> import time"))
    assert lines[start:] == [
        f">>> {work}", "done", '>>> print("while busy")', "while busy", '>>> print("now idle")', "now idle", ">>>",
    ], lines  # fmt: skip
    # The first prompt, then one per line read: three lines, no empty one from a stray Enter.
    # (Every trigger is answered by now: nothing of the supervisor's can reach the pane later.)
    _eventually(lambda: _prompts(log) >= 4, 5, "the prompt after the third line")
    assert _prompts(log) == 4, [json.loads(line) for line in log.read_text().splitlines()]
