"""The cooldown after a real failure streak holds only the agent that failed (issue 28), through the
supervisor process against real tmux: one pane runs an agent that shows its `>>>` prompt and
swallows every key (no echo, never runs anything: each prompt typed into it is answered timeout),
another a real `python3 -i`. After three timeouts on the first, a trigger to the REPL is delivered
at once (and runs), and the swallowing agent's next trigger is deferred with a sentence saying why
and how long it waits. The supervisor runs with the cooldown on (3 failures, 30 s)."""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agents.harness import private_socket
from tests.infra import InfraUrls
from tests.integration.supervisor.conftest import SETTINGS, Supervisor, start_supervisor, wait_ready_pane

# Draws a REPL's prompt, then reads every key in raw mode and drops it: a hung agent.
SWALLOWER = """
import sys, termios, tty
sys.stdout.write(">>> ")
sys.stdout.flush()
tty.setraw(0)
while sys.stdin.buffer.read1(1024):
    pass
"""
COOLDOWN_SECS = 30


@pytest.fixture(scope="module")
def cooling_supervisor(
    infra: InfraUrls, migrated_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Supervisor]:
    folder = tmp_path_factory.mktemp("supervisor-cooldown")
    settings = {
        **SETTINGS,
        "KRONII_SUPERVISOR_COOLDOWN_FAILURES": "3",
        "KRONII_SUPERVISOR_COOLDOWN_SECS": str(COOLDOWN_SECS),
    }
    with (
        private_socket() as socket,
        start_supervisor(infra, migrated_database, folder, socket, settings=settings) as sup,
    ):
        yield sup


def _spawn(supervisor: Supervisor, agent: str, command: list[str]) -> dict[str, Any]:
    runtime: dict[str, Any] = supervisor.spawn(agent, kind="python", workspace="wscool", command=command)[
        "runtime"
    ]
    wait_ready_pane(supervisor, runtime["runtime_id"], ">>>")
    return runtime


def _eventually(check: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def test_a_failure_streak_on_one_pane_holds_only_that_agent_and_its_next_trigger_says_why(
    cooling_supervisor: Supervisor, tmp_path: Path
) -> None:
    supervisor = cooling_supervisor
    swallower = tmp_path / "swallower.py"
    swallower.write_text(SWALLOWER)
    sick, well = f"sick-{uuid.uuid4().hex[:6]}", f"well-{uuid.uuid4().hex[:6]}"
    _spawn(supervisor, sick, [sys.executable, str(swallower)])
    _spawn(supervisor, well, [sys.executable, "-i", "-q"])

    for n in range(3):
        failed = supervisor.trigger(sick, f"print('lost {n}')", workspace="wscool", ack_timeout_ms=300)
        assert (failed["result"], failed["error_code"]) == ("timeout", "ACK_TIMEOUT"), failed
        assert "same trigger_id" in failed["detail"], failed

    marker = tmp_path / "ran.txt"
    started = time.monotonic()
    delivered = supervisor.trigger(well, f"open({str(marker)!r}, 'w').write('ran')", workspace="wscool")
    took = time.monotonic() - started
    assert (delivered["result"], delivered["delivery_backend"]) == ("delivered", "tmux"), delivered
    assert took < 3, f"the healthy agent waited {took:.1f} s behind the other's cooldown"
    _eventually(marker.exists, 5, "the REPL to run the delivered prompt")

    waiting = supervisor.trigger(sick, "print('after the streak')", workspace="wscool")
    assert (waiting["result"], waiting["error_code"]) == ("deferred", "TRIGGER_COOLDOWN"), waiting
    detail = waiting["detail"]
    assert detail.startswith(
        "the agent's last 3 triggers failed (the prompt was typed but the agent showed no sign of taking it); "
        "waiting "
    ), detail
    seconds = int(detail.split("waiting ")[1].split(" s ")[0])
    assert 0 < seconds <= COOLDOWN_SECS, detail
    assert supervisor.get_trigger(waiting["trigger_id"])["detail"] == detail
