"""Fail closed: while the broker cannot see the desktop's viewers, nobody can say that nobody watches,
so every agent's acquire is refused with a sentence naming the cause (HTTP 409), a lease taken by
policy ends, and the person can still grant. In process: the Attachment, the ControlSession and the
BrokerOperations the API calls, with fakes for the outside world."""

from __future__ import annotations

from typing import Any

import pytest
from kronii.broker.core.callers import Caller
from kronii.broker.core.commands import GrantCommand, LeaseCommand
from kronii.broker.core.machine import Policy
from kronii.broker.core.model import AgentStatus, ControlMode, ControlState
from kronii.broker.core.table import Event
from kronii.broker.metrics import BrokerMetrics
from kronii.broker.usecases.control_session import CURRENT, ControlSession
from kronii.broker.usecases.operations import BrokerOperations
from kronii.broker.usecases.submit_input import InputLane
from kronii.broker.usecases.track_presence import Attachment
from kronii.foundation.errors import FailedPrecondition
from prometheus_client import CollectorRegistry

CAUSE = "the broker cannot see the desktop's viewers: port 5906 is held by another x11vnc (pid 4242)"
AGENT = Caller("agent", "agent:a", agent="a")
PERSON = Caller("person", "person:uid:1000")


class _Quiet:
    async def publish(self, state: ControlState, cause: str, signal: str) -> None:
        return None

    def write(self, record: dict[str, Any]) -> None:
        return None

    async def record(self, **row: Any) -> None:
        return None

    def inject(self, *_: object) -> bool:
        return True


class _Setup:
    def __init__(self, *, devices_make_interactive: bool = False) -> None:
        metrics = BrokerMetrics(CollectorRegistry())
        quiet = _Quiet()
        self.control = ControlSession(
            session_id="s1",
            policy=Policy(),
            metrics=metrics,
            publisher=quiet,
            journal=quiet,
            audit=quiet.record,
        )
        self.attachment = Attachment(
            self.control, metrics, flag=False, devices_make_interactive=devices_make_interactive
        )
        self.desk = BrokerOperations(
            self.control,
            InputLane(self.control, quiet, metrics, size=4),
            sign_in=quiet,  # type: ignore[arg-type]  # no sign-in in these tests
            default_lease_secs=30,
            presence_problem=lambda: self.attachment.presence_problem,
        )

    def acquire(self) -> ControlState:
        return self.desk.lease(AGENT, LeaseCommand(CURRENT, Event.ACQUIRE, 30))


async def test_unknown_presence_refuses_an_agents_acquire_naming_the_cause() -> None:
    setup = _Setup()
    setup.attachment.viewers_unseen(CAUSE)
    state = setup.control.state
    assert state.interactive and state.interactive_reason == "unknown"
    with pytest.raises(FailedPrecondition) as refused:
        setup.acquire()
    assert refused.value.http_status == 409
    assert CAUSE in str(refused.value) and "kronii control grant" in str(refused.value)
    assert setup.control.state.control_mode is ControlMode.USER


async def test_an_agent_acquires_again_once_the_viewers_are_seen_and_nobody_watches() -> None:
    setup = _Setup()
    setup.attachment.viewers_unseen(CAUSE)
    with pytest.raises(FailedPrecondition):
        setup.acquire()
    setup.attachment.viewers_unseen("")
    assert not setup.control.state.interactive
    assert setup.attachment.presence_problem == ""
    assert setup.acquire().control_mode is ControlMode.AGENT


async def test_a_viewer_seen_while_presence_was_unknown_makes_it_a_person_watching() -> None:
    setup = _Setup()
    setup.attachment.viewers_unseen(CAUSE)
    setup.attachment.viewers(1)
    assert setup.control.state.interactive_reason == "viewer"
    with pytest.raises(FailedPrecondition) as refused:
        setup.acquire()
    assert "grants it" in str(refused.value) and CAUSE not in str(refused.value)


async def test_losing_sight_of_the_viewers_ends_a_lease_taken_by_policy() -> None:
    setup = _Setup()
    assert setup.acquire().control_mode is ControlMode.AGENT
    setup.attachment.viewers_unseen(CAUSE)
    state = setup.control.state
    assert state.control_mode is ControlMode.USER and state.agent_status is AgentStatus.STOPPED
    assert state.interactive_reason == "unknown"


async def test_the_person_can_still_grant_while_presence_is_unknown() -> None:
    setup = _Setup()
    setup.attachment.viewers_unseen(CAUSE)
    state = setup.desk.grant(PERSON, GrantCommand(CURRENT, "a", 30, window=7))
    assert state.control_mode is ControlMode.AGENT and state.holder == "a" and state.granted_by_user


async def test_devices_that_count_say_a_person_is_there_whatever_the_viewers() -> None:
    setup = _Setup(devices_make_interactive=True)
    setup.attachment.viewers_unseen(CAUSE)
    setup.attachment.devices(2)
    assert setup.control.state.interactive_reason == "devices"
    assert setup.attachment.presence_problem == ""
    with pytest.raises(FailedPrecondition):
        setup.acquire()
