"""STOP_NOW from a terminal, against a real broker process on Xvfb + openbox with real NATS, Redis and
PostgreSQL (issue 30): through the broker's stop socket under a flood of 40 queued actions of 1,000
characters each, nothing lands after the stop and the answer comes at once; the plain `kronii control
stop`, a process of its own, stops an agent through that socket."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from kronii.agents.broker_client import BrokerClient
from kronii.runtime.rendezvous import broker_stop_socket_path

from tests.desktop import wait_until
from tests.infra import InfraUrls
from tests.integration.broker.broker_support import Broker, start_broker
from tests.integration.broker.test_broker_service import INTERACTIVE, agent_token
from tests.person_hands import PersonHands

ACTIONS = 40
ACTION_SIZE = 1000


@pytest.fixture
def broker(infra: InfraUrls, migrated_database: str, x_display: str, tmp_path: Path) -> Iterator[Broker]:
    with start_broker(infra, migrated_database, x_display, tmp_path, settings=INTERACTIVE) as running:
        yield running


def stop_socket(broker: Broker) -> Path:
    return broker_stop_socket_path(broker.folder / "data", runtime_dir=str(broker.folder / "run"))


def ask_stop(path: Path) -> tuple[str, float]:
    """The stop socket's answer to STOP and the seconds it took, connect to answer."""
    started = time.monotonic()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(10)
        client.connect(str(path))
        client.sendall(b"STOP\n")
        answer = b""
        while not answer.endswith(b"\n"):
            chunk = client.recv(256)
            if not chunk:
                break
            answer += chunk
    return answer.decode(), time.monotonic() - started


def flood(broker: Broker, agent: BrokerClient, results: list[Any]) -> list[threading.Thread]:
    """ACTIONS concurrent calls of one agent, each typing ACTION_SIZE characters: "[NN]" then "c"s."""
    lock = threading.Lock()

    def send(index: int) -> None:
        client = BrokerClient(broker.url, timeout=60)
        client.use_token(agent_token(agent), agent.client_id)
        outcome = client.type_text(f"[{index:02d}]" + "c" * (ACTION_SIZE - 4))
        with lock:
            results.append(outcome)

    senders = [threading.Thread(target=send, args=(index,)) for index in range(ACTIONS)]
    for sender in senders:
        sender.start()
    return senders


def test_stop_now_through_the_stop_socket_under_40_queued_actions_of_1000_characters(
    broker: Broker, recording_terminal: Any, x_display: str
) -> None:
    terminal = recording_terminal("FloodTerm")
    agent = broker.agent()
    state = broker.grant(agent.client_id, seconds=120, window=terminal.window_id)
    results: list[Any] = []
    senders = flood(broker, agent, results)
    wait_until(lambda: terminal.received().count("c") > 50, timeout_s=20, what="the flood typing")
    answer, took = ask_stop(stop_socket(broker))
    # The person's own key once the stop is answered: what the terminal shows after it reached the X
    # server after the stop (keys sent before it may still be on their way through xterm and `cat`).
    with PersonHands(x_display) as person:
        person.type("|")
    wait_until(lambda: "|" in terminal.received(), timeout_s=10, what="the person's key")
    for sender in senders:
        sender.join(60)
    assert answer == f"stopped epoch {state['epoch']}\n"
    assert took < 0.3, f"the stop socket answered in {took * 1000:.0f} ms under the flood"
    time.sleep(0.5)  # what was still on its way would show now
    before, _, after = terminal.received().partition("|")
    assert after == "", f"agent input landed after the stop: {after[:80]!r}"
    assert before.count("c") < ACTIONS * (ACTION_SIZE - 4), "the whole flood landed: nothing was stopped"
    assert len(results) == ACTIONS
    dropped = [result for result in results if not result.injected]
    assert len(dropped) >= ACTIONS - 2, "the queued actions were not dropped"
    assert {result.dropped for result in dropped} <= {"stopped", "stale_epoch"}
    stopped = broker.state()
    assert stopped["control_mode"] == "USER" and stopped["user_intent"] == "STOP_NOW"
    rows = [row for row in broker.journal() if row["event"] == "stop_now"]
    assert rows and rows[-1]["actor"] == "person:stop-socket"


def test_kronii_control_stop_from_a_terminal_stops_the_agent_through_the_stop_socket(
    broker: Broker, recording_terminal: Any
) -> None:
    terminal = recording_terminal("CommandTerm")
    agent = broker.agent()
    state = broker.grant(agent.client_id, seconds=60, window=terminal.window_id)
    env = {key: value for key, value in broker.env.items() if key != "KRONII_BROKER_URL"}
    done = subprocess.run(
        [sys.executable, "-m", "kronii.launcher.cli.main", "control", "stop"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("STOP_NOW: the agent is stopped")
    assert f"(epoch {state['epoch']})" in done.stdout
    wait_until(lambda: broker.state()["user_intent"] == "STOP_NOW", timeout_s=5, what="the table's STOP_NOW")
    assert broker.state()["control_mode"] == "USER"
    assert agent.type_text("late").dropped == "stopped"
    session = broker.state()["session_id"]
    with psycopg.connect(broker.database.replace("postgresql+psycopg", "postgresql")) as conn:

        def audited() -> list[tuple[Any, ...]]:
            return conn.execute(
                "SELECT actor FROM audit_log WHERE service = 'broker' AND action = 'broker.stop' AND subject = %s",
                (session,),
            ).fetchall()

        wait_until(lambda: bool(audited()), timeout_s=10, what="the stop in the audit chain")
        assert [str(actor) for (actor,) in audited()] == ["person:stop-socket"]
    assert os.stat(stop_socket(broker)).st_mode & 0o777 == 0o600
    ready = httpx.get(f"{broker.url}/readyz", timeout=10).json()["dependencies"]["stop_socket"]
    assert ready["ready"] is True and ready["detail"] == "listening"
