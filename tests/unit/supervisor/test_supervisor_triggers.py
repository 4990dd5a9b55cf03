"""The trigger use case in process (triggers.py, lifecycle.py, outcomes.py), on fakes of the pane,
the registry and the stores, with an injected clock."""

from __future__ import annotations

import asyncio

from kronii.stores import subjects
from kronii.supervisor.core.model import PaneFacts
from kronii.supervisor.v1 import supervisor_pb2 as pb

from tests.unit.supervisor.trigger_fakes import CALLER, FakePanes, runtime, trigger_world


def request(
    trigger_id: str, prompt: str = "run the tests", agent_id: str = "agent"
) -> pb.TriggerRuntimeRequest:
    return pb.TriggerRuntimeRequest(
        trigger_id=trigger_id, agent_id=agent_id, workspace_id="ws", prompt=prompt
    )


async def test_a_trigger_is_typed_into_the_agents_pane_and_its_outcome_recorded_and_published() -> None:
    world = trigger_world(FakePanes())

    outcome = await world.desk.trigger(request("t-1"), CALLER)

    assert (outcome.result, outcome.delivery_backend, outcome.acked_by) == ("delivered", "tmux", "output")
    assert outcome.runtime_id == "rt-1"
    assert world.panes.written == [("%1", "run the tests")]
    assert world.state.outcomes["t-1"]["result"] == "delivered"
    assert "t-1" not in world.state.queue and world.state.finished == ["t-1"]
    assert [row["result"] for row in world.records.rows] == ["delivered"]
    assert world.records.audits[0] is not None and world.records.audits[0]["action"] == "supervisor.trigger"
    assert [(pattern, m.trigger_id) for pattern, m in world.bus.published] == [  # type: ignore[attr-defined]
        (subjects.SUPERVISOR_OUTCOME.pattern, "t-1")
    ]


async def test_a_repeated_trigger_id_gets_the_first_outcome_and_types_nothing_again() -> None:
    world = trigger_world(FakePanes())
    await world.desk.trigger(request("t-1"), CALLER)

    again = await world.desk.trigger(request("t-1", prompt="something else"), CALLER)

    assert (again.result, again.duplicate) == ("delivered", True)
    assert world.panes.written == [("%1", "run the tests")]


async def test_a_person_typing_in_the_pane_defers_the_trigger_until_they_stop() -> None:
    panes = FakePanes(PaneFacts(human_activity_at=None))
    world = trigger_world(panes)
    panes.facts = PaneFacts(human_activity_at=world.clock.now - 1)

    deferred = await world.desk.trigger(request("t-1"), CALLER)

    assert (deferred.result, deferred.error_code) == ("deferred", "OPERATOR_BUSY")
    assert panes.written == []
    assert world.registry.records["rt-1"].operator_busy
    due = world.state.queue["t-1"][1]
    assert due == deferred.deferred_until.ToNanoseconds() / 1e9 > world.clock.now

    panes.facts = PaneFacts(human_activity_at=world.clock.now - 1)  # quiet since, for the window
    world.clock.advance(due - world.clock.now + 30)
    await world.desk.take_due()
    delivered = await world.desk.inflight["t-1"]

    assert delivered.result == "delivered"
    assert panes.written == [("%1", "run the tests")]
    assert not world.registry.records["rt-1"].operator_busy


async def test_two_triggers_for_one_pane_are_typed_one_after_the_other_in_arrival_order() -> None:
    panes = FakePanes(typing_secs=0.05)
    world = trigger_world(panes)

    first, second = await asyncio.gather(
        world.desk.trigger(request("t-1", prompt="first"), CALLER),
        world.desk.trigger(request("t-2", prompt="second"), CALLER),
    )

    assert (first.result, second.result) == ("delivered", "delivered")
    assert panes.most_at_once == 1
    assert panes.written == [("%1", "first"), ("%1", "second")]


async def test_triggers_for_different_panes_are_typed_at_the_same_time() -> None:
    panes = FakePanes(typing_secs=0.05)
    world = trigger_world(panes, runtime("rt-1", "%1", "one"), runtime("rt-2", "%2", "two"))

    outcomes = await asyncio.gather(
        world.desk.trigger(request("t-1", agent_id="one"), CALLER),
        world.desk.trigger(request("t-2", agent_id="two"), CALLER),
    )

    assert [o.runtime_id for o in outcomes] == ["rt-1", "rt-2"]
    assert panes.most_at_once == 2


async def test_tmux_not_answering_defers_with_a_sentence_and_the_trigger_is_delivered_once_it_does() -> None:
    # Issue 26 item 13: in the second after a restart, tmux could not be asked about a live pane
    # and the trigger was answered `failed RUNTIME_OFFLINE`.
    why = "tmux did not answer about pane %1: the tmux control connection ended"
    panes = FakePanes(PaneFacts(agent_in_foreground=False, agent_state="", unanswered=why))
    world = trigger_world(panes)

    deferred = await world.desk.trigger(request("t-1"), CALLER)

    assert (deferred.result, deferred.error_code) == ("deferred", "TMUX_UNAVAILABLE")
    assert deferred.detail.startswith(why) and "not taken as gone" in deferred.detail
    assert panes.written == [] and world.records.rows[-1]["detail"] == deferred.detail
    assert world.registry.records["rt-1"].status.value != "offline"

    panes.facts = PaneFacts()  # tmux answers again: the pane is there, the agent idle
    world.clock.advance(world.state.queue["t-1"][1] - world.clock.now + 0.01)
    await world.desk.take_due()
    delivered = await world.desk.inflight["t-1"]

    assert (delivered.result, delivered.delivery_backend) == ("delivered", "tmux")
    assert panes.written == [("%1", "run the tests")]


async def test_a_pane_tmux_says_is_gone_fails_runtime_offline_without_a_fallback() -> None:
    panes = FakePanes(PaneFacts(exists=False, agent_in_foreground=False, agent_state="exited"))
    world = trigger_world(panes)

    outcome = await world.desk.trigger(request("t-1"), CALLER)

    assert (outcome.result, outcome.error_code) == ("failed", "RUNTIME_OFFLINE")
    assert outcome.detail == "the agent's process or pane is gone" and panes.written == []
