"""The access use case in process (guard.Guard): who is calling, what they may do, the per-caller
circuit breaker, the audit row, and agents' sign-in, with fakes of the sessions, the presence proof
and the peer registry, and a clock the test moves."""

from __future__ import annotations

from typing import Any

import pytest
from kronii.capture.core.breaker import CircuitBreaker
from kronii.capture.core.capabilities import AGENT_DEFAULT, LOCAL_DEFAULT, Capability
from kronii.capture.core.identity import Identity, caller_key
from kronii.capture.usecases.guard_access import Guard
from kronii.edge.peers import PeerIdentity
from kronii.foundation.errors import (
    InvalidArgument,
    PermissionDenied,
    ResourceExhausted,
    Unauthenticated,
)

from tests.unit.capture import capture_fakes as fakes

LOCAL_PEER = "ipv4:127.0.0.1:50123"
STRANGER = "ipv4:10.0.0.9:40000"
ME = PeerIdentity(uid=1000, pid=321, exe="/usr/bin/kronii")


class Setup:
    def __init__(
        self, *, presence: Capability | None = Capability.READ_REDACTED | Capability.LIST_META, **changes: Any
    ) -> None:
        self.clock = fakes.Clock()
        self.audit = fakes.Audit()
        self.metrics = fakes.metrics()
        self.clients = fakes.Clients(AGENT_DEFAULT | Capability.READ_RAW_ENCRYPTED)
        self.presence = fakes.PresenceProof(presence)
        self.guard = Guard(
            settings=fakes.settings(**changes),
            clients=self.clients,
            presence=self.presence,
            peers=lambda peer: ME if peer == LOCAL_PEER else None,
            breaker=CircuitBreaker(3, 60_000, 120_000),
            metrics=self.metrics,
            record=self.audit,
            clock=self.clock,
        )

    async def agent_token(self) -> str:
        return (await self.guard.authenticate("challenge-1", "agent-1", b"good")).token


async def test_an_agent_session_is_its_capabilities_without_raw_reads_unless_enabled() -> None:
    closed = Setup()
    identity = await closed.guard.identify(STRANGER, f"Bearer {await closed.agent_token()}")
    assert identity.kind == "agent" and identity.actor == "agent:agent-1"
    assert not identity.allows(Capability.READ_RAW_ENCRYPTED)

    opened = Setup(read_raw_encrypted_enabled=True)
    identity = await opened.guard.identify(STRANGER, f"bearer {await opened.agent_token()}")
    assert identity.allows(Capability.READ_RAW_ENCRYPTED)


async def test_a_local_caller_may_request_captures_unless_the_operator_turned_that_off() -> None:
    identity = await Setup().guard.identify(LOCAL_PEER, None)
    assert identity.kind == "local" and identity.capabilities == LOCAL_DEFAULT and identity.pid == ME.pid

    identity = await Setup(local_request_capture=False).guard.identify(LOCAL_PEER, None)
    assert identity.capabilities == Capability.NONE


async def test_a_caller_neither_local_nor_signed_in_is_unauthenticated() -> None:
    with pytest.raises(Unauthenticated):
        await Setup().guard.identify(STRANGER, "Bearer not-a-session")


async def test_repeated_unidentified_calls_open_the_breaker_until_it_cools_down() -> None:
    setup = Setup()
    for _ in range(3):
        with pytest.raises(Unauthenticated):
            await setup.guard.identify_or_count(STRANGER, None)

    with pytest.raises(ResourceExhausted) as refused:
        await setup.guard.identify_or_count(STRANGER, None)
    assert refused.value.retry_after_ms == 120_000
    assert fakes.sample(setup.metrics.breaker_opened) == 1

    setup.clock.advance(120_000)
    setup.guard.admit(caller_key(STRANGER, None))


async def test_a_local_reader_gets_read_capabilities_from_a_persons_proof() -> None:
    setup = Setup()
    caller = await setup.guard.identify(LOCAL_PEER, None)

    reader = await setup.guard.authorize(LOCAL_PEER, caller, Capability.READ_REDACTED, {})

    assert reader.allows(Capability.READ_REDACTED) and reader.proof == "tty"
    assert setup.presence.asked == [ME]


async def test_a_local_reader_without_a_persons_proof_is_denied() -> None:
    setup = Setup(presence=None)
    caller = await setup.guard.identify(LOCAL_PEER, None)

    with pytest.raises(PermissionDenied, match="no one confirmed"):
        await setup.guard.authorize(LOCAL_PEER, caller, Capability.READ_REDACTED, {})


async def test_an_agent_is_not_offered_a_persons_window() -> None:
    setup = Setup()
    agent = Identity("agent", "agent-1", None, None, "", Capability.REQUEST_CAPTURE)

    assert await setup.guard.authorize(STRANGER, agent, Capability.READ_REDACTED, {}) is agent
    assert setup.presence.asked == []


async def test_denied_calls_of_a_known_caller_count_and_the_audit_row_names_them() -> None:
    setup = Setup()
    caller = await setup.guard.identify(LOCAL_PEER, None)
    key = caller_key(LOCAL_PEER, caller)
    for _ in range(3):
        await setup.guard.outcome(
            key=key, identity=caller, operation="list", error=PermissionDenied("no"), subject="s1"
        )

    with pytest.raises(ResourceExhausted):
        setup.guard.admit(key)
    row = setup.audit.rows[-1]
    assert row["actor"] == "local:uid:1000" and row["action"] == "capture.list"
    assert row["outcome"] == "permission_denied" and row["pid"] == ME.pid and row["reason"] == "no"
    assert fakes.sample(setup.metrics.access, "list", "permission_denied") == 3


async def test_a_successful_call_after_the_cool_down_closes_the_breaker_again() -> None:
    setup = Setup()
    caller = await setup.guard.identify(LOCAL_PEER, None)
    key = caller_key(LOCAL_PEER, caller)
    for _ in range(3):
        await setup.guard.outcome(key=key, identity=caller, operation="list", error=PermissionDenied("no"))
    setup.clock.advance(120_000)
    await setup.guard.outcome(key=key, identity=caller, operation="list", error=None)
    await setup.guard.outcome(key=key, identity=caller, operation="list", error=PermissionDenied("no"))

    setup.guard.admit(key)  # one failure after closing does not trip it again
    assert setup.audit.rows[-2]["outcome"] == "ok"


async def test_sign_in_errors_become_the_shared_error_vocabulary() -> None:
    setup = Setup()
    with pytest.raises(InvalidArgument) as malformed:
        await setup.guard.begin_challenge("not an id")
    assert malformed.value.field == "client_id"

    with pytest.raises(Unauthenticated, match="does not verify"):
        await setup.guard.authenticate("challenge-1", "agent-1", b"forged")

    challenge = await setup.guard.begin_challenge("agent-1")
    assert challenge.challenge_id == "challenge-1"
