"""BrokerClient against an in-process fake of the broker's agent HTTP API: sign-in with key files,
leases, safe points, input, and the one error type carrying the broker's code and sentence."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from kronii.agents.broker_client import BAD_KEY, UNREACHABLE, BrokerClient, BrokerError, load_private_key

from tests.unit.broker.broker_fakes import AGENT, FakeBroker, new_key, serve, write_pem_key


@pytest.fixture
def broker() -> FakeBroker:
    return FakeBroker()


@pytest.fixture
def url(broker: FakeBroker) -> Iterator[str]:
    with serve(broker) as base:
        yield base


@pytest.fixture
def client(broker: FakeBroker, url: str, tmp_path: Path) -> BrokerClient:
    key = new_key()
    broker.register(AGENT, key)
    signed = BrokerClient(url)
    signed.sign_in(AGENT, write_pem_key(tmp_path / "agent.key", key))
    return signed


def test_sign_in_with_a_pem_key_file_gives_a_token_later_calls_carry(
    broker: FakeBroker, client: BrokerClient
) -> None:
    state = client.state()

    assert state.session_id == "current-desktop"
    assert broker.calls[-1].token  # the GET carried the bearer token the sign-in returned
    assert client.client_id == AGENT


def test_sign_in_accepts_raw_and_openssh_keys(broker: FakeBroker, url: str, tmp_path: Path) -> None:
    key = new_key()
    broker.register(AGENT, key)
    raw = tmp_path / "raw.key"
    raw.write_bytes(
        key.private_bytes(
            serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
        )
    )
    raw.chmod(0o600)
    ssh = tmp_path / "ssh.key"
    ssh.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
        )
    )
    ssh.chmod(0o600)

    for path in (raw, ssh):
        assert BrokerClient(url).sign_in(AGENT, path).token


def test_a_key_file_others_can_read_is_refused_with_a_sentence(tmp_path: Path) -> None:
    path = write_pem_key(tmp_path / "agent.key", new_key(), mode=0o644)

    with pytest.raises(BrokerError) as caught:
        load_private_key(path)

    assert caught.value.code == BAD_KEY
    assert "chmod 600" in caught.value.message


def test_a_wrong_key_is_refused_by_the_broker_as_unauthenticated(
    broker: FakeBroker, url: str, tmp_path: Path
) -> None:
    broker.register(AGENT, new_key())

    with pytest.raises(BrokerError) as caught:
        BrokerClient(url).sign_in(AGENT, write_pem_key(tmp_path / "other.key", new_key()))

    assert (caught.value.status, caught.value.code) == (401, "unauthenticated")
    assert "signature" in str(caught.value)


def test_acquire_then_input_sends_the_lease_epoch(broker: FakeBroker, client: BrokerClient) -> None:
    state = client.acquire(30)
    result = client.key("ctrl+s")

    assert state.held_by(AGENT)
    assert result.injected
    assert broker.inputs[-1] == {"kind": "key", "keys": "ctrl+s", "epoch": state.epoch}


def test_input_sent_under_a_revoked_lease_is_dropped_as_stale(
    broker: FakeBroker, client: BrokerClient
) -> None:
    client.acquire(30)
    broker.revoke()
    broker.grant(AGENT)  # a new grant: a new epoch the client has not seen

    result = client.type_text("hello")

    assert (result.injected, result.dropped) == (False, "stale_epoch")


def test_every_input_kind_has_the_broker_body(broker: FakeBroker, client: BrokerClient) -> None:
    client.type_text("hi")
    client.click(5, 6, button=3)
    client.move(7, 8)
    client.scroll(0, 2)

    assert broker.inputs == [
        {"kind": "type", "text": "hi"},
        {"kind": "click", "x": 5, "y": 6, "button": 3},
        {"kind": "move", "x": 7, "y": 8},
        {"kind": "scroll", "dx": 0, "dy": 2},
    ]


def test_a_malformed_action_fails_here_without_a_request(broker: FakeBroker, client: BrokerClient) -> None:
    before = len(broker.calls)

    with pytest.raises(BrokerError) as caught:
        client.key("ctrl s; rm")

    assert caught.value.code == "invalid_argument"
    assert caught.value.field == "keys"
    assert len(broker.calls) == before


def test_a_refused_lease_raises_with_the_brokers_code_and_sentence(
    broker: FakeBroker, client: BrokerClient
) -> None:
    broker.interactive = True

    with pytest.raises(BrokerError) as caught:
        client.acquire(30)

    assert (caught.value.status, caught.value.code) == (409, "failed_precondition")
    assert str(caught.value) == "a person is watching: ask them to grant control"


def test_safe_point_returns_the_brokers_action_and_state(broker: FakeBroker, client: BrokerClient) -> None:
    client.acquire(30)
    broker.safe_points = ["PAUSE"]

    decision = client.safe_point("click_ok", 1)

    assert decision.action == "PAUSE"
    assert decision.state.agent_status == "PAUSED"
    assert broker.calls[-1].body == {"step": "click_ok", "sequence": 1}


def test_release_gives_the_desktop_back(broker: FakeBroker, client: BrokerClient) -> None:
    client.acquire(30)

    state = client.release()

    assert state.control_mode == "USER"
    assert client.epoch is None


def test_nothing_answering_is_an_unreachable_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again before the call: nothing listens there

    with pytest.raises(BrokerError) as caught:
        BrokerClient(f"http://127.0.0.1:{port}", timeout=2).state()

    assert caught.value.code == UNREACHABLE
    assert "did not answer" in caught.value.message
