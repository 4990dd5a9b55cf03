"""The broker as a person and agents meet it: a real broker process on Xvfb + openbox with real
NATS, Redis and PostgreSQL, agents signed in with Ed25519 keys, the person's grant made through the
local socket from a terminal, the person's hands as a device of their own (tests/person_hands.py:
xdotool is automation around the broker, tests/integration/broker/test_broker_real_xdotool_unbrokered.py), x11vnc
and vncdotool as a person watching remotely (seed 004's integration tests)."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import nats
import pytest
from kronii.agents.broker_client import BrokerClient, BrokerError
from kronii.broker.v1 import broker_pb2 as pb

from tests.desktop import wait_until
from tests.infra import InfraUrls
from tests.integration.broker.broker_support import Broker, start_broker
from tests.integration.broker.conftest import xdotool
from tests.person_hands import PersonHands

INTERACTIVE = {"KRONII_BROKER_INTERACTIVE": "true", "KRONII_BROKER_REMOTE_VIEW": "false"}


@pytest.fixture
def broker(infra: InfraUrls, migrated_database: str, x_display: str, tmp_path: Path) -> Iterator[Broker]:
    with start_broker(infra, migrated_database, x_display, tmp_path, settings=INTERACTIVE) as running:
        yield running


def test_an_agent_cannot_grant_itself_control_nor_can_a_process_over_tcp(broker: Broker) -> None:
    agent = broker.agent()
    grant = {"agent": agent.client_id, "lease_seconds": 30}
    as_agent = httpx.post(
        f"{broker.url}/sessions/current/control/grant",
        json=grant,
        headers={"authorization": f"Bearer {agent_token(agent)}"},
        timeout=10,
    )
    assert as_agent.status_code == 403
    assert "an agent cannot grant control" in as_agent.json()["detail"]
    over_tcp = httpx.post(f"{broker.url}/sessions/current/control/grant", json=grant, timeout=10)
    assert over_tcp.status_code == 403
    assert "only the desktop user can do this" in over_tcp.json()["detail"]
    with pytest.raises(BrokerError) as refused:
        agent.acquire(30)
    assert refused.value.code == "failed_precondition"
    assert broker.state()["control_mode"] == "USER"
    assert agent.type_text("nope").dropped == "user_control"


def agent_token(agent: BrokerClient) -> str:
    header = agent._http.headers.get("authorization", "")
    return header.removeprefix("Bearer ")


def test_the_persons_grant_from_a_terminal_lets_the_agents_keys_reach_the_leased_xterm(
    broker: Broker, recording_terminal: Any
) -> None:
    terminal = recording_terminal("LeasedTerm")
    agent = broker.agent()
    state = broker.grant(agent.client_id, seconds=30, window=terminal.window_id)
    assert state["control_mode"] == "AGENT" and state["holder"] == agent.client_id
    result = agent.type_text("granted ok")
    assert result.injected, result
    terminal.wait_for("granted ok")
    rows = [row for row in broker.journal() if row["event"] == "grant"]
    assert rows and rows[-1]["actor"].startswith("person:uid:")


def test_the_persons_key_typed_while_the_agent_types_revokes_the_lease(
    broker: Broker, recording_terminal: Any
) -> None:
    terminal = recording_terminal("AgentTerm")
    agent = broker.agent()
    broker.grant(agent.client_id, seconds=60, window=terminal.window_id)
    results: list[Any] = []

    def keep_typing() -> None:
        for _ in range(2000):
            results.append(agent.type_text("a" * 10))
            if not results[-1].injected:
                return

    typing = threading.Thread(target=keep_typing)
    typing.start()
    wait_until(lambda: len(terminal.received()) > 50, timeout_s=10, what="the agent typing")
    with PersonHands(broker.display) as person:
        person.type("P")
    typing.join(30)
    state = broker.state()
    assert state["control_mode"] == "USER" and state["agent_status"] == "STOPPED"
    assert results[0].injected and not results[-1].injected, results[-3:]
    assert results[-1].dropped in ("user_control", "stopped", "stale_epoch")
    assert len(results) < 2000
    landed = terminal.received()
    time.sleep(0.5)
    assert terminal.received().count("a") == landed.count("a"), "agent keys landed after the revocation"
    assert agent.key("Return").dropped == "stopped"
    overrides = [row for row in broker.journal() if row.get("signal") == "user_input_override"]
    assert overrides and overrides[-1]["actor"] == "person"


def test_stop_now_drops_queued_input_and_nothing_lands_after_it(
    broker: Broker, recording_terminal: Any, x_display: str
) -> None:
    terminal = recording_terminal("StopTerm")
    agent = broker.agent()
    broker.grant(agent.client_id, seconds=60, window=terminal.window_id)
    results: list[Any] = []
    lock = threading.Lock()

    def send(index: int) -> None:
        client = BrokerClient(broker.url, timeout=30)
        client.use_token(agent_token(agent), agent.client_id)
        outcome = client.type_text(f"[{index:02d}]" + "b" * 200)
        with lock:
            results.append(outcome)

    senders = [threading.Thread(target=send, args=(index,)) for index in range(12)]
    for sender in senders:
        sender.start()
    wait_until(lambda: "b" in terminal.received(), timeout_s=10, what="the queue draining")
    stopped = broker.intent("STOP_NOW")
    # The person's own key, typed once the stop is answered: what the terminal shows after it came
    # to the X server after the stop. (Keys sent before the stop may still be on their way through
    # xterm, its pty and `cat` when the answer comes: a snapshot of the file would count them.)
    with PersonHands(x_display) as person:
        person.type("|")
    wait_until(lambda: "|" in terminal.received(), timeout_s=10, what="the person's key")
    for sender in senders:
        sender.join(30)
    time.sleep(0.5)
    assert stopped["control_mode"] == "USER" and stopped["user_intent"] == "STOP_NOW"
    before, _, after = terminal.received().partition("|")
    assert after == "", f"agent input landed after STOP_NOW: {after[:80]!r}"
    dropped = [result for result in results if not result.injected]
    assert dropped, "nothing was queued when the stop came: the test did not test a queue"
    assert {result.dropped for result in dropped} <= {"stopped", "stale_epoch"}
    assert len(re.findall(r"\[\d\d\]", before)) < 12


def test_safe_interrupt_pauses_at_the_next_safe_point_and_returns_control(
    broker: Broker, recording_terminal: Any
) -> None:
    terminal = recording_terminal("PauseTerm")
    agent = broker.agent()
    broker.grant(agent.client_id, seconds=60, window=terminal.window_id)
    assert agent.safe_point("first", 1).action == "CONTINUE"
    assert agent.type_text("one ").injected
    asked = broker.intent("SAFE_INTERRUPT")
    assert asked["control_mode"] == "AGENT" and asked["agent_status"] == "STOPPING"
    assert agent.type_text("two ").injected  # cooperative: until its safe point the agent goes on
    with pytest.raises(BrokerError):
        agent.renew(60)
    decision = agent.safe_point("second", 2)
    assert decision.action == "PAUSE"
    state = broker.state()
    assert state["control_mode"] == "USER" and state["agent_status"] == "PAUSED"
    assert agent.type_text("three").dropped == "paused"
    terminal.wait_for("one two ")
    assert [row["answer"] for row in broker.journal() if row["event"] == "safe_point"] == [
        "CONTINUE",
        "PAUSE",
    ]


def test_the_stop_is_published_on_nats_with_the_persons_hold(broker: Broker) -> None:
    async def scenario() -> pb.ControlChanged:
        connection = await nats.connect(broker.infra.nats)
        try:
            subscription = await connection.subscribe("kronii.broker.control")
            await connection.flush()
            await asyncio.to_thread(broker.intent, "STOP_NOW")
            while True:
                message = await subscription.next_msg(timeout=10)
                change = pb.ControlChanged.FromString(message.data)
                if change.cause == "stop_now":
                    return change
        finally:
            await connection.close()

    change = asyncio.run(scenario())
    assert change.state.control_mode == "USER" and change.signal == "stop_now"
    assert change.state.HasField("user_holds_until")
    assert change.state.user_holds_until.ToMilliseconds() > time.time() * 1000


def test_the_grpc_input_stream_ends_when_the_person_stops_the_agent(
    broker: Broker, recording_terminal: Any
) -> None:
    import grpc
    from kronii.broker.v1 import broker_pb2_grpc as pb_grpc

    terminal = recording_terminal("StreamTerm")
    agent = broker.agent()
    broker.grant(agent.client_id, seconds=60, window=terminal.window_id)
    metadata = (("authorization", f"Bearer {agent_token(agent)}"),)

    three_answered = threading.Event()

    def actions() -> Iterator[pb.AgentInputRequest]:
        for index in range(50):
            if index == 3:
                # gRPC reads the requests ahead of the answers: the person stops the agent once the
                # first three actions are answered, not merely sent.
                assert three_answered.wait(10)
                broker.intent("STOP_NOW")
            yield pb.AgentInputRequest(session_id="current", action=pb.InputAction(kind="type", text="s"))

    results: list[pb.AgentInputResult] = []
    with grpc.insecure_channel(f"127.0.0.1:{broker.grpc_port}") as channel:
        stub = pb_grpc.BrokerStub(channel)
        for result in stub.InputStream(actions(), metadata=metadata, timeout=30):
            results.append(result)
            if len(results) == 3:
                three_answered.set()
    assert [result.injected for result in results[:3]] == [True, True, True]
    assert not results[-1].injected and results[-1].dropped in ("stopped", "stale_epoch")
    assert len(results) < 50
    terminal.wait_for("sss")


def test_the_stop_keys_stop_the_agent_and_grants_overrides_and_stops_are_in_the_audit_chain(
    broker: Broker, recording_terminal: Any
) -> None:
    import psycopg

    terminal = recording_terminal("KeysTerm")
    agent = broker.agent()
    broker.grant(agent.client_id, seconds=60, window=terminal.window_id)
    with PersonHands(broker.display) as person:
        person.key("ctrl+alt+Escape")
    wait_until(lambda: broker.state()["user_intent"] == "STOP_NOW", timeout_s=5, what="the STOP keys")
    state = broker.state()
    assert state["control_mode"] == "USER" and state["agent_status"] == "STOPPED"
    assert agent.type_text("late").dropped == "stopped"
    with psycopg.connect(broker.database.replace("postgresql+psycopg", "postgresql")) as conn:
        rows = conn.execute(
            "SELECT action, actor FROM audit_log WHERE service = 'broker' AND subject = %s ORDER BY id",
            (state["session_id"],),
        ).fetchall()
    actions = [action for action, _ in rows]
    assert actions[:1] == ["broker.grant"] and "broker.override" in actions and "broker.stop" in actions
    actors = {str(action): str(actor) for action, actor in rows}
    assert actors["broker.stop"] == "person:stop-keys"


def test_a_grant_naming_no_window_pins_the_agent_to_the_window_the_person_has_in_front_of_them(
    broker: Broker, recording_terminal: Any
) -> None:
    terminal = recording_terminal("FrontTerm")
    xdotool(broker.display, "windowactivate", "--sync", str(terminal.window_id))
    agent = broker.agent()
    state = broker.grant(agent.client_id, seconds=30)
    assert int(state["window"]) == terminal.window_id
    renewed = broker.as_person("POST", "/sessions/current/control/extend", {"lease_seconds": 120})
    assert "STATUS 200" in renewed.shown, renewed.shown
    after = broker.state()
    assert after["epoch"] == state["epoch"] and after["holder"] == agent.client_id
