"""StepRunner against the in-process fake broker: safe points before each step (CONTINUE, PAUSE then a
new grant, STOP), a takeover seen as a dropped input, lease renewal, and the cancellation token."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kronii.agents.broker_client import BrokerClient, BrokerError
from kronii.broker.cli.steps import CancellationToken, Step, StepRunner, Stopped

from tests.unit.broker.broker_fakes import AGENT, FakeBroker, new_key, serve, write_pem_key


@pytest.fixture
def broker() -> FakeBroker:
    return FakeBroker()


@pytest.fixture
def client(broker: FakeBroker, tmp_path: Path) -> Iterator[BrokerClient]:
    key = new_key()
    broker.register(AGENT, key)
    with serve(broker) as url:
        signed = BrokerClient(url)
        signed.sign_in(AGENT, write_pem_key(tmp_path / "agent.key", key))
        yield signed


def recording(ran: list[str], name: str) -> Step:
    return Step(name, lambda client: ran.append(name))


def test_all_steps_run_under_an_acquired_lease_then_it_is_released(
    broker: FakeBroker, client: BrokerClient
) -> None:
    ran: list[str] = []

    done = StepRunner(client, [recording(ran, "open"), recording(ran, "save")]).run()

    assert done == ran == ["open", "save"]
    assert broker.count("/sessions/current/agent/safe_point") == 2
    assert broker.control_mode == "USER"  # released when done


def test_stop_at_a_safe_point_runs_nothing_after_it(broker: FakeBroker, client: BrokerClient) -> None:
    broker.safe_points = ["CONTINUE", "STOP"]
    ran: list[str] = []
    token = CancellationToken()
    steps = [recording(ran, "one"), recording(ran, "two"), recording(ran, "three")]

    with pytest.raises(Stopped) as caught:
        StepRunner(client, steps, token=token).run()

    assert ran == ["one"]
    assert caught.value.completed == ["one"]
    assert token.cancelled


def test_pause_waits_for_a_new_grant_then_resumes(broker: FakeBroker, client: BrokerClient) -> None:
    broker.safe_points = ["CONTINUE", "PAUSE"]
    broker.pause_grants_after = 0.5
    ran: list[tuple[str, float]] = []
    started = time.monotonic()

    def step(name: str) -> Step:
        return Step(name, lambda client: ran.append((name, time.monotonic() - started)))

    StepRunner(client, [step("one"), step("two")], poll_interval=0.05).run()

    assert [name for name, _ in ran] == ["one", "two"]
    assert ran[1][1] >= 0.5  # step two waited for the grant
    assert broker.count("/sessions/current") >= 3  # it polled the state while paused
    assert broker.count("/sessions/current/agent/safe_point") == 3  # and asked again after the grant


def test_a_paused_run_ends_when_its_token_is_cancelled(broker: FakeBroker, client: BrokerClient) -> None:
    broker.safe_points = ["PAUSE"]
    ran: list[str] = []
    token = CancellationToken()
    threading.Timer(0.3, token.cancel, args=("the operator gave up",)).start()

    with pytest.raises(Stopped) as caught:
        StepRunner(client, [recording(ran, "one")], token=token, poll_interval=0.05).run()

    assert ran == []
    assert caught.value.reason == "the operator gave up"


def test_a_stop_now_while_paused_ends_the_run(broker: FakeBroker, client: BrokerClient) -> None:
    broker.safe_points = ["PAUSE"]
    threading.Timer(0.2, broker.revoke, args=("STOPPED",)).start()

    with pytest.raises(Stopped):
        StepRunner(client, [Step("one", lambda client: None)], poll_interval=0.05).run()


def test_an_input_dropped_because_the_user_took_over_cancels_the_rest(
    broker: FakeBroker, client: BrokerClient
) -> None:
    broker.drops = ["user_control"]
    after_drop: list[str] = []
    ran: list[str] = []
    token = CancellationToken()

    def typing(client: BrokerClient) -> None:
        client.key("ctrl+s")
        after_drop.append("still typing")

    with pytest.raises(Stopped) as caught:
        StepRunner(client, [Step("typing", typing), recording(ran, "next")], token=token).run()

    assert after_drop == []
    assert ran == []
    assert "user_control" in caught.value.reason
    assert token.cancelled


def test_an_input_dropped_for_a_queue_full_does_not_cancel(broker: FakeBroker, client: BrokerClient) -> None:
    broker.drops = ["queue_full"]
    results: list[str] = []

    StepRunner(client, [Step("typing", lambda client: results.append(client.key("Return").dropped))]).run()

    assert results == ["queue_full"]


def test_no_input_is_sent_once_the_token_is_cancelled(broker: FakeBroker, client: BrokerClient) -> None:
    token = CancellationToken()

    def cancel_then_type(client: BrokerClient) -> None:
        token.cancel("cancelled by the caller")
        client.type_text("should not be sent")

    with pytest.raises(Stopped):
        StepRunner(client, [Step("typing", cancel_then_type)], token=token).run()

    assert broker.inputs == []


def test_the_lease_is_renewed_at_half_its_length_until_refused(
    broker: FakeBroker, client: BrokerClient
) -> None:
    renewals_when_revoked: list[int] = []

    def long_step(client: BrokerClient) -> None:
        time.sleep(1.3)
        renewals_when_revoked.append(broker.renewals)
        broker.revoke()  # the next renewal is refused: the renewer stops
        time.sleep(1.2)

    StepRunner(client, [Step("long", long_step)], lease_seconds=1).run()

    assert renewals_when_revoked[0] >= 2
    refused = broker.count("/sessions/current/control/renew") - renewals_when_revoked[0]
    assert refused == 1  # one refused attempt, then no more


def test_an_interactive_session_refuses_the_lease_with_the_brokers_sentence(
    broker: FakeBroker, client: BrokerClient
) -> None:
    broker.interactive = True
    ran: list[str] = []

    with pytest.raises(BrokerError) as caught:
        StepRunner(client, [recording(ran, "one")]).run()

    assert "grant" in caught.value.message
    assert ran == []


def test_a_granted_lease_is_used_without_acquiring(broker: FakeBroker, client: BrokerClient) -> None:
    broker.interactive = True
    broker.grant(AGENT)
    ran: list[str] = []

    StepRunner(client, [recording(ran, "one")]).run()

    assert ran == ["one"]
    assert broker.count("/sessions/current/control/acquire") == 0


def test_a_run_cancelled_mid_step_gives_its_lease_back(broker: FakeBroker, client: BrokerClient) -> None:
    token = CancellationToken()

    def cancelled_by_the_caller(client: BrokerClient) -> None:
        token.cancel("the caller gave up")
        client.key("Return")

    with pytest.raises(Stopped):
        StepRunner(client, [Step("one", cancelled_by_the_caller)], token=token).run()

    assert broker.count("/sessions/current/control/release") == 1
    assert broker.control_mode == "USER"
