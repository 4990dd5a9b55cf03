"""Acknowledgements in process (acks.py): a hook's ack or a heartbeat ends the wait of the trigger
the agent took, on fakes of the registry and the stores."""

from __future__ import annotations

import asyncio

import pytest
from kronii.foundation.errors import NotFound, PermissionDenied
from kronii.supervisor.core.agent_state import Delivery
from kronii.supervisor.core.tokens import Claims
from kronii.supervisor.v1 import supervisor_pb2 as pb

from tests.unit.supervisor.trigger_fakes import CALLER, T0, FakePanes, TriggerWorld, trigger_world

OTHER_RUNTIME = Claims(
    subject="runtime:rt-9",
    scopes=frozenset({"runtime:rt-9"}),
    workspaces=frozenset({"ws"}),
    expires_at=T0 + 3600,
)


async def _waiting(world: TriggerWorld, trigger_id: str) -> asyncio.Task[pb.TriggerOutcome]:
    """A trigger typed into a pane that shows nothing, waiting for its ack."""
    request = pb.TriggerRuntimeRequest(
        trigger_id=trigger_id, agent_id="agent", workspace_id="ws", prompt="go"
    )
    task = asyncio.create_task(world.desk.trigger(request, CALLER))
    for _ in range(200):
        if (trigger_id, "deliver", "written") in world.trigger_log.steps:
            return task
        await asyncio.sleep(0.005)
    raise AssertionError("the trigger never reached its wait for the ack")


async def test_an_ack_naming_the_trigger_ends_its_wait_as_delivered_by_ack() -> None:
    world = trigger_world(FakePanes(seen=Delivery.PENDING))
    task = await _waiting(world, "t-1")

    answer = await world.acks.ack(pb.AckTriggerRequest(trigger_id="t-1"), CALLER)
    outcome = await asyncio.wait_for(task, 2)

    assert (answer.accepted, answer.trigger_id) == (True, "t-1")
    assert (outcome.result, outcome.acked_by) == ("delivered", "ack")
    # The pane is told its typed prompt's delivery is decided: its screen may be the idle one again.
    assert world.panes.done == [world.panes.written[0][0]]


async def test_a_heartbeat_of_the_runtime_acknowledges_the_trigger_waiting_on_it() -> None:
    world = trigger_world(FakePanes(seen=Delivery.PENDING))
    task = await _waiting(world, "t-1")

    assert world.acks.acknowledge_runtime("rt-1", "heartbeat") == ["t-1"]
    outcome = await asyncio.wait_for(task, 2)

    assert (outcome.result, outcome.acked_by) == ("delivered", "heartbeat")


async def test_an_ack_for_a_finished_trigger_is_not_accepted_and_an_unknown_one_is_not_found() -> None:
    world = trigger_world(FakePanes())
    await world.desk.trigger(
        pb.TriggerRuntimeRequest(trigger_id="t-1", agent_id="agent", workspace_id="ws", prompt="go"), CALLER
    )

    late = await world.acks.ack(pb.AckTriggerRequest(trigger_id="t-1"), CALLER)

    assert late.accepted is False
    with pytest.raises(NotFound):
        await world.acks.ack(pb.AckTriggerRequest(trigger_id="never"), CALLER)


async def test_a_runtime_may_not_ack_for_another_runtime() -> None:
    world = trigger_world(FakePanes())

    with pytest.raises(PermissionDenied, match="lacks the 'operate' scope"):
        await world.acks.ack(pb.AckTriggerRequest(runtime_id="rt-1"), OTHER_RUNTIME)
