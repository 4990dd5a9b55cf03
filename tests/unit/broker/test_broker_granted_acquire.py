"""An agent the person granted acquires while the person watches (issue 30): the acquire use case
in process, with the control session's real journal and audit effects captured by fakes."""

from __future__ import annotations

from typing import Any

import pytest
from kronii.broker.core.callers import Caller
from kronii.broker.core.commands import LeaseCommand
from kronii.broker.core.machine import Happening, Policy
from kronii.broker.core.model import ControlMode, ControlState
from kronii.broker.core.table import Event
from kronii.broker.metrics import BrokerMetrics
from kronii.broker.usecases.control_session import ControlSession
from kronii.broker.usecases.hold_lease import HoldLease
from kronii.foundation.errors import FailedPrecondition
from prometheus_client import CollectorRegistry

PERSON = "person:uid:1000"
VISION = Caller("agent", "agent:vision", agent="vision")


class Effects:
    def __init__(self) -> None:
        self.journal: list[dict[str, Any]] = []
        self.audit: list[dict[str, Any]] = []

    async def publish(self, state: ControlState, cause: str, signal: str) -> None:
        return None

    def write(self, record: dict[str, Any]) -> None:
        self.journal.append(record)

    async def record(self, **row: Any) -> None:
        self.audit.append(row)


class Clock:
    ms = 5_000_000

    def wall(self) -> float:
        return self.ms / 1000

    def monotonic(self) -> float:
        return self.ms / 1000

    def wall_ms(self) -> int:
        return self.ms

    def monotonic_ms(self) -> int:
        return self.ms


def _watched() -> tuple[ControlSession, HoldLease, Effects]:
    effects = Effects()
    desk = ControlSession(
        session_id="s1",
        policy=Policy(),
        metrics=BrokerMetrics(CollectorRegistry()),
        publisher=effects,
        journal=effects,
        audit=effects.record,
        clock=Clock(),
        interactive_reason="viewer",
    )
    return desk, HoldLease(desk, default_lease_secs=30), effects


def _acquire(hold: HoldLease, seconds: int = 30) -> ControlState:
    return hold(VISION, LeaseCommand("current", Event.ACQUIRE, seconds))


async def test_the_granted_agent_acquires_while_the_person_watches_audited_and_journaled() -> None:
    desk, hold, effects = _watched()
    granted = desk.handle(Happening(Event.GRANT, agent="vision", lease_ms=120_000), actor=PERSON).state

    state = _acquire(hold, seconds=300)
    await desk.settle()

    assert state.control_mode is ControlMode.AGENT and state.holder == "vision"
    assert state.lease_expiry_ms == granted.lease_expiry_ms and state.epoch == granted.epoch
    assert effects.journal[-1]["row"] == "AG" and effects.journal[-1]["outcome"] == "held"
    assert effects.journal[-1]["actor"] == "agent:vision"
    acquired = [row for row in effects.audit if row["action"] == "broker.acquire"]
    assert acquired and acquired[-1]["outcome"] == "held" and acquired[-1]["agent"] == "vision"


async def test_without_a_grant_the_refusal_names_the_grant_the_person_would_type() -> None:
    _, hold, _ = _watched()
    with pytest.raises(FailedPrecondition, match=r"`kronii control grant vision`"):
        _acquire(hold)


async def test_a_grant_to_another_agent_does_not_let_this_one_acquire() -> None:
    desk, hold, _ = _watched()
    desk.handle(Happening(Event.GRANT, agent="macro", lease_ms=120_000), actor=PERSON)
    with pytest.raises(FailedPrecondition, match="a person is at this desktop"):
        _acquire(hold)


async def test_the_persons_input_still_takes_back_what_the_agent_acquired_under_the_grant() -> None:
    desk, hold, _ = _watched()
    desk.handle(Happening(Event.GRANT, agent="vision", lease_ms=120_000), actor=PERSON)
    _acquire(hold)

    after = desk.handle(Happening(Event.USER_INPUT), actor="person").state

    assert after.control_mode is ControlMode.USER and after.holder == ""
    with pytest.raises(FailedPrecondition, match="grants it"):
        _acquire(hold)


def test_the_grant_commands_help_names_the_vision_engines_client_id() -> None:
    from click.testing import CliRunner
    from kronii.broker.cli.control import control_command

    shown = CliRunner().invoke(control_command, ["grant", "--help"])

    assert shown.exit_code == 0 and "`vision` for the vision engine" in shown.output
