"""The broker's orchestration in process, with fakes for the outside world: the control desk's
effects (queue, journal, audit, NATS, notification), the input lane's epochs, and the person's
choices from the notification and the STOP keys."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from kronii.broker.core.facts import UserInputSeen
from kronii.broker.core.machine import Happening, Policy
from kronii.broker.core.model import ControlMode, ControlState
from kronii.broker.core.table import Event
from kronii.broker.metrics import BrokerMetrics
from kronii.broker.ports import InjectionGuard
from kronii.broker.usecases.control_session import ControlSession
from kronii.broker.usecases.submit_input import InputLane
from kronii.broker.usecases.track_presence import Attachment
from kronii.desktop.input_actions import InputAction
from prometheus_client import CollectorRegistry


class Effects:
    def __init__(self) -> None:
        self.published: list[tuple[str, str]] = []
        self.journal: list[dict[str, Any]] = []
        self.audit: list[dict[str, Any]] = []
        self.notices: list[str] = []

    async def publish(self, state: ControlState, cause: str, signal: str) -> None:
        self.published.append((cause, signal))

    def write(self, record: dict[str, Any]) -> None:
        self.journal.append(record)

    async def record(self, **row: Any) -> None:
        self.audit.append(row)

    async def show_lease(self, state: ControlState) -> None:
        self.notices.append(f"show {state.holder}")

    async def close(self) -> None:
        self.notices.append("close")

    async def show_notice(self, title: str, sentence: str) -> None:
        self.notices.append(f"notice: {title}")


class SlowHands:
    """Types one key at a time, asking still_valid before each, like the X injector; it waits at the
    ``pause_at``-th key until the test lets it go on."""

    def __init__(self, pause_at: int = -1) -> None:
        self.sent: list[str] = []
        self.gate = threading.Event()
        self.reached = threading.Event()
        self.resume = threading.Event()
        self._pause_at = pause_at

    def inject(self, action: InputAction, window: int, guard: InjectionGuard) -> bool:
        for character in action.text:
            if len(self.sent) == self._pause_at:
                self.reached.set()
                self.resume.wait(5)
            self.gate.wait(5)
            if not guard.still_valid():
                return False
            self.sent.append(character)
        return True


class Clock:
    """The service clock at ``ms`` on both scales, moved by the test."""

    def __init__(self) -> None:
        self.ms = 1_000_000

    def wall(self) -> float:
        return self.ms / 1000

    def monotonic(self) -> float:
        return self.ms / 1000

    def wall_ms(self) -> int:
        return self.ms

    def monotonic_ms(self) -> int:
        return self.ms


def _desk(effects: Effects, clock: Clock, metrics: BrokerMetrics, reason: str = "flag") -> ControlSession:
    desk = ControlSession(
        session_id="s1",
        policy=Policy(hold_ms=10_000),
        metrics=metrics,
        publisher=effects,
        journal=effects,
        audit=effects.record,
        notifier=effects,
        clock=clock,
        interactive_reason=reason,
    )
    return desk


@pytest.fixture
def metrics() -> BrokerMetrics:
    return BrokerMetrics(CollectorRegistry())


async def test_a_grant_publishes_audits_journals_and_shows_the_lease(metrics: BrokerMetrics) -> None:
    effects, clock = Effects(), Clock()
    desk = _desk(effects, clock, metrics)
    desk.handle(Happening(Event.GRANT, agent="a", lease_ms=30_000, window=5), actor="person:uid:1000")
    await desk.settle()
    assert effects.published == [("grant", "")]
    assert [row["action"] for row in effects.audit] == ["broker.grant"]
    assert effects.audit[0]["actor"] == "person:uid:1000" and effects.audit[0]["agent"] == "a"
    assert effects.journal[-1]["row"] == "G2" and effects.journal[-1]["session_id"] == "s1"
    assert effects.notices == ["show a"]


async def test_the_persons_input_mid_action_stops_the_injection_and_clears_the_queue(
    metrics: BrokerMetrics,
) -> None:
    effects, clock = Effects(), Clock()
    desk = _desk(effects, clock, metrics)
    hands = SlowHands(pause_at=2)
    lane = InputLane(desk, hands, metrics, size=8)
    lane.start()
    attachment = Attachment(desk, metrics, flag=True, devices_make_interactive=True)
    desk.handle(Happening(Event.GRANT, agent="a", lease_ms=30_000), actor="person")
    first = asyncio.create_task(lane.submit("a", InputAction("type", text="abcdefgh")))
    queued = asyncio.create_task(lane.submit("a", InputAction("type", text="zzz")))
    hands.gate.set()
    await asyncio.to_thread(hands.reached.wait, 5)
    attachment.user_input(UserInputSeen("key", 7, "Virtual core XTEST keyboard", 0.0))
    hands.resume.set()
    interrupted, dropped = await asyncio.gather(first, queued)
    assert not interrupted.injected and interrupted.dropped == "stopped"
    assert not dropped.injected and dropped.dropped == "stopped"
    assert "z" not in hands.sent and len(hands.sent) < 8
    assert desk.state.control_mode is ControlMode.USER
    assert attachment.last_revocation_s is not None
    await desk.settle()
    assert ("user_input", "user_input_override") in effects.published
    assert [row["action"] for row in effects.audit][-1] == "broker.override"
    await lane.stop()


async def test_wait_on_the_lease_notification_gives_the_agent_the_rest_of_its_lease_back(
    metrics: BrokerMetrics,
) -> None:
    effects, clock = Effects(), Clock()
    desk = _desk(effects, clock, metrics)
    attachment = Attachment(desk, metrics, flag=True, devices_make_interactive=True)
    desk.handle(Happening(Event.GRANT, agent="a", lease_ms=30_000, window=9), actor="person")
    clock.ms += 10_000
    attachment.user_input(UserInputSeen("button", 2, "Virtual core pointer", 0.0))  # the click itself
    assert desk.state.control_mode is ControlMode.USER
    attachment.notification_choice("wait")
    state = desk.state
    assert state.control_mode is ControlMode.AGENT and state.holder == "a" and state.window == 9
    assert state.lease_expiry_ms == clock.ms + 20_000


async def test_interrupt_on_the_notification_regrants_with_a_pause_asked_and_stop_stops(
    metrics: BrokerMetrics,
) -> None:
    effects, clock = Effects(), Clock()
    desk = _desk(effects, clock, metrics)
    attachment = Attachment(desk, metrics, flag=True, devices_make_interactive=True)
    desk.handle(Happening(Event.GRANT, agent="a", lease_ms=30_000), actor="person")
    attachment.user_input(UserInputSeen("button", 2, "Virtual core pointer", 0.0))
    attachment.notification_choice("interrupt")
    regranted = desk.state
    assert regranted.control_mode is ControlMode.AGENT and regranted.user_intent.value == "SAFE_INTERRUPT"
    attachment.notification_choice("stop")
    stopped = desk.state
    assert stopped.control_mode is ControlMode.USER and stopped.user_intent.value == "STOP_NOW"
    attachment.notification_choice("wait")  # nothing left to give back after a stop
    assert desk.state.control_mode is ControlMode.USER


async def test_the_stop_keys_stop_and_a_viewer_makes_the_session_interactive(metrics: BrokerMetrics) -> None:
    effects, clock = Effects(), Clock()
    desk = _desk(effects, clock, metrics, reason="")
    attachment = Attachment(desk, metrics, flag=False, devices_make_interactive=False)
    desk.handle(Happening(Event.ACQUIRE, agent="a", lease_ms=30_000), actor="agent:a")
    assert desk.state.control_mode is ControlMode.AGENT
    attachment.devices(2)  # devices do not count with the setting off
    assert not desk.state.interactive
    attachment.viewers(1)
    assert desk.state.interactive and desk.state.interactive_reason == "viewer"
    assert desk.state.control_mode is ControlMode.USER  # V1: a policy lease ends when a person attaches
    attachment.stop_keys()
    assert desk.state.user_intent.value == "STOP_NOW"


async def test_a_full_queue_drops_with_queue_full_and_the_lease_clock_ends_a_lease(
    metrics: BrokerMetrics,
) -> None:
    effects, clock = Effects(), Clock()
    desk = _desk(effects, clock, metrics)
    hands = SlowHands()
    lane = InputLane(desk, hands, metrics, size=1)
    lane.start()
    desk.handle(Happening(Event.GRANT, agent="a", lease_ms=1_000), actor="person")
    first = asyncio.create_task(lane.submit("a", InputAction("type", text="x")))
    await asyncio.sleep(0.01)
    second = asyncio.create_task(lane.submit("a", InputAction("type", text="y")))
    await asyncio.sleep(0)
    third = await lane.submit("a", InputAction("type", text="z"))
    assert third.dropped == "queue_full"
    clock.ms += 2_000
    desk.tick()
    hands.gate.set()
    results = await asyncio.gather(first, second)
    assert [result.injected for result in results] == [False, False]
    assert desk.state.control_mode is ControlMode.USER
    await desk.settle()
    assert ("tick", "lease_expired") in effects.published
    await lane.stop()


async def test_the_state_goes_out_again_with_its_last_cause_for_late_subscribers(
    metrics: BrokerMetrics,
) -> None:
    effects, clock = Effects(), Clock()
    desk = _desk(effects, clock, metrics)
    desk.handle(Happening(Event.GRANT, agent="a", lease_ms=30_000), actor="person")
    desk.handle(Happening(Event.STOP_NOW), actor="person")
    desk.republish()
    await desk.settle()
    assert effects.published[-1] == ("stop_now", "stop_now")


class HandsThatSeeThePersonFirst:
    """The injector's own look at the X server's queue finds the person's event in its first batch,
    before the watcher's news has reached the loop: it closes the fence and stops."""

    def __init__(self) -> None:
        self.stopped = threading.Event()

    def inject(self, action: InputAction, window: int, guard: InjectionGuard) -> bool:
        guard.person_seen()
        self.stopped.set()
        return False


async def test_an_action_the_injector_stopped_for_the_person_is_answered_only_once_the_table_decided(
    metrics: BrokerMetrics,
) -> None:
    effects, clock = Effects(), Clock()
    desk = _desk(effects, clock, metrics)
    lane = InputLane(desk, HandsThatSeeThePersonFirst(), metrics, size=8)
    lane.start()
    attachment = Attachment(desk, metrics, flag=True, devices_make_interactive=True)
    desk.handle(Happening(Event.GRANT, agent="a", lease_ms=30_000), actor="person")
    answer = asyncio.create_task(lane.submit("a", InputAction("type", text="abc")))
    await asyncio.sleep(0.3)  # the watcher is behind: the fence is closed, the table not yet told
    before = desk.state
    assert not desk.fence.open_for(before.epoch) and before.control_mode is ControlMode.AGENT
    assert not answer.done(), "the agent was answered while the state still said it held the desktop"
    attachment.user_input(UserInputSeen("key", 15, "person keyboard", 0.0))
    result = await asyncio.wait_for(answer, 2)
    assert not result.injected and result.dropped == "stopped"
    assert desk.state.control_mode is ControlMode.USER
    await lane.stop()


async def test_an_answer_waits_for_the_table_no_longer_than_its_bound(
    metrics: BrokerMetrics, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("kronii.broker.usecases.submit_input.TABLE_CATCH_UP_S", 0.2)
    effects, clock = Effects(), Clock()
    desk = _desk(effects, clock, metrics)
    lane = InputLane(desk, HandsThatSeeThePersonFirst(), metrics, size=8)
    lane.start()
    desk.handle(Happening(Event.GRANT, agent="a", lease_ms=30_000), actor="person")
    result = await asyncio.wait_for(lane.submit("a", InputAction("type", text="abc")), 2)
    assert not result.injected and result.dropped == "stopped"
    await lane.stop()
