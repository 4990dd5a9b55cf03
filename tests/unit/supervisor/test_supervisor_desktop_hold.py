"""While the person holds the desktop (the input broker's `user_holds_until` is ahead), the supervisor
defers every trigger into its panes with USER_HOLDS_DESKTOP: the admission policy, and the trigger use
case in process fed ControlChanged messages as the bus delivers them."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp
from kronii.broker.v1 import broker_pb2 as bpb
from kronii.desktop.hold import DesktopHold
from kronii.supervisor.core.model import ErrorCode, GuardFacts, PaneFacts, RuntimeFacts, Situation
from kronii.supervisor.core.params import SupervisorParams
from kronii.supervisor.core.policy import assess
from kronii.supervisor.core.table import Signal
from kronii.supervisor.v1 import supervisor_pb2 as pb

from tests.unit.supervisor.trigger_fakes import CALLER, FakePanes, TriggerWorld, trigger_world

P = SupervisorParams()
NOW = 2_000_000.0


def held(until: float | None, *, forced: bool = False) -> Situation:
    hold = DesktopHold("s1", until, "stop_now", at=NOW - 1) if until is not None else None
    return Situation(
        runtime=RuntimeFacts("rt-1", "codex"), pane=PaneFacts(), force_override=forced, desktop_hold=hold
    )


# ---- admission ------------------------------------------------------------------------------------


def test_a_hold_in_force_defers_with_user_holds_desktop_and_looks_again_at_the_recheck() -> None:
    verdict = assess(held(NOW + 120), P, NOW)

    assert verdict.signal is Signal.USER_HOLDS_DESKTOP and verdict.code is ErrorCode.USER_HOLDS_DESKTOP
    assert verdict.defer_until == NOW + P.recheck_secs


def test_a_hold_ending_before_the_recheck_defers_only_until_it_ends() -> None:
    assert assess(held(NOW + 2), P, NOW).defer_until == NOW + 2


def test_a_hold_in_the_past_or_none_lets_the_trigger_through() -> None:
    assert assess(held(NOW - 1), P, NOW).signal is Signal.RUNTIME_READY
    assert assess(held(NOW), P, NOW).signal is Signal.RUNTIME_READY
    assert assess(held(None), P, NOW).signal is Signal.RUNTIME_READY


def test_even_a_forced_trigger_waits_while_the_user_holds_the_desktop() -> None:
    assert assess(held(NOW + 60, forced=True), P, NOW).signal is Signal.USER_HOLDS_DESKTOP


def test_the_hold_comes_before_any_fallback_that_would_open_a_window_on_the_desktop() -> None:
    offline = Situation(runtime=None, pane=None, desktop_hold=DesktopHold("s1", NOW + 60))
    assert assess(offline, P, NOW).signal is Signal.USER_HOLDS_DESKTOP
    blocked = Situation(
        runtime=None,
        pane=None,
        guards=GuardFacts(thread_blocked=True),
        desktop_hold=DesktopHold("s1", NOW + 60),
    )
    assert assess(blocked, P, NOW).signal is Signal.THREAD_BLOCKED


# ---- the trigger use case, fed by the bus ----------------------------------------------------------


def stamp(at: float) -> Timestamp:
    out = Timestamp()
    out.FromNanoseconds(round(at * 1e9))
    return out


def changed(session: str, until: float | None, at: float, cause: str = "stop_now") -> bpb.ControlChanged:
    state = bpb.ControlState(session_id=session, control_mode="USER", user_intent="STOP_NOW")
    if until is not None:
        state.user_holds_until.CopyFrom(stamp(until))
    return bpb.ControlChanged(state=state, cause=cause, signal=cause, at=stamp(at))


def request(trigger_id: str, prompt: str = "run the tests") -> pb.TriggerRuntimeRequest:
    return pb.TriggerRuntimeRequest(trigger_id=trigger_id, agent_id="agent", workspace_id="ws", prompt=prompt)


async def broker_says(
    world: TriggerWorld, session: str, until: float | None, cause: str = "stop_now"
) -> None:
    await world.desktop.on_control("kronii.broker.control", changed(session, until, world.clock.now, cause))


async def test_a_hold_from_the_broker_defers_the_trigger_and_nothing_is_typed() -> None:
    world = trigger_world(FakePanes())
    await broker_says(world, "s1", world.clock.now + 120)

    outcome = await world.desk.trigger(request("t-1"), CALLER)

    assert (outcome.result, outcome.error_code) == ("deferred", "USER_HOLDS_DESKTOP")
    assert "the user holds the desktop" in outcome.detail and "stop_now" in outcome.detail
    assert world.panes.written == []
    assert world.state.queue["t-1"][1] == world.clock.now + P.recheck_secs


async def test_a_deferred_trigger_is_delivered_once_the_broker_ends_the_hold() -> None:
    world = trigger_world(FakePanes())
    await broker_says(world, "s1", world.clock.now + 120)
    deferred = await world.desk.trigger(request("t-1"), CALLER)
    assert deferred.error_code == "USER_HOLDS_DESKTOP"

    world.clock.advance(P.recheck_secs)
    await world.desk.take_due()
    still = await world.desk.inflight["t-1"]
    assert (still.result, still.error_code) == ("deferred", "USER_HOLDS_DESKTOP")

    await broker_says(world, "s1", None, cause="wait")
    world.clock.advance(P.recheck_secs)
    await world.desk.take_due()
    delivered = await world.desk.inflight["t-1"]

    assert delivered.result == "delivered"
    assert world.panes.written == [("%1", "run the tests")]


async def test_a_hold_that_already_ended_or_was_never_set_lets_the_trigger_through() -> None:
    world = trigger_world(FakePanes())
    await broker_says(world, "s1", world.clock.now - 1)
    await broker_says(world, "s2", None, cause="grant")

    outcome = await world.desk.trigger(request("t-1"), CALLER)

    assert outcome.result == "delivered"
    assert world.panes.written == [("%1", "run the tests")]


async def test_a_desktop_session_setting_ignores_holds_on_other_broker_sessions() -> None:
    world = trigger_world(FakePanes(), desktop_session="mine")
    await broker_says(world, "someone-else", world.clock.now + 120)

    through = await world.desk.trigger(request("t-1"), CALLER)
    assert through.result == "delivered"

    await broker_says(world, "mine", world.clock.now + 120)
    deferred = await world.desk.trigger(request("t-2", prompt="and the linters"), CALLER)
    assert (deferred.result, deferred.error_code) == ("deferred", "USER_HOLDS_DESKTOP")
