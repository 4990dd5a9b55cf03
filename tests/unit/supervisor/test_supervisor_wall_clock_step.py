"""Durations are measured on the monotonic clock: a step of the wall clock (+2 h and back, as NTP or
a person setting the time does) neither stretches a cooldown to 2 h nor ends it early. The
clock is injected (FakeClock: `advance` is time passing, `step_wall` moves only the wall clock);
the trigger use case runs in process on the fakes of its ports."""

from __future__ import annotations

from kronii.supervisor.core.params import SupervisorParams
from kronii.supervisor.v1 import supervisor_pb2 as pb

from tests.unit.supervisor.trigger_fakes import CALLER, FakePanes, TriggerWorld, trigger_world

P = SupervisorParams()
TWO_HOURS = 7200.0


def request(trigger_id: str, prompt: str) -> pb.TriggerRuntimeRequest:
    return pb.TriggerRuntimeRequest(trigger_id=trigger_id, agent_id="agent", workspace_id="ws", prompt=prompt)


async def _fail_into_cooldown(world: TriggerWorld) -> None:
    # tmux refuses the keys for the agent's pane: each trigger fails (WRITE_FAILED), a real failure.
    world.panes.failing.add("%1")
    for n in range(P.cooldown_failures):
        failed = await world.desk.trigger(request(f"fail-{n}", f"attempt {n}"), CALLER)
        assert (failed.result, failed.error_code) == ("failed", "WRITE_FAILED")
    world.panes.failing.clear()  # the pane takes keys again: only the cooldown holds it


async def _cooling(world: TriggerWorld, trigger_id: str) -> float:
    """Trigger once; it must be deferred by the cooldown. Returns its due time in the queue."""
    outcome = await world.desk.trigger(request(trigger_id, "after the failures"), CALLER)
    assert (outcome.result, outcome.error_code) == ("deferred", "TRIGGER_COOLDOWN"), outcome
    due = world.state.queue[trigger_id][1]
    # What the caller and the record are told is wall time: the same moment, said on the wall clock.
    told = outcome.deferred_until.ToNanoseconds() / 1e9
    assert abs(told - (world.clock.time() + due - world.clock.monotonic())) < 1e-3
    return due


async def _delivered_when_due(world: TriggerWorld, trigger_id: str) -> None:
    await world.desk.take_due()
    outcome = await world.desk.inflight[trigger_id]
    assert outcome.result == "delivered", outcome


async def test_a_cooldown_lasts_its_length_when_the_wall_clock_steps_2_h_ahead_and_back() -> None:
    world = trigger_world(FakePanes())
    world.state.counts_failures = True
    world.clock.step_wall(+TWO_HOURS)
    await _fail_into_cooldown(world)  # failures recorded while the wall clock is 2 h ahead
    world.clock.step_wall(-TWO_HOURS)  # and back

    due = await _cooling(world, "t-cool")
    assert due - world.clock.monotonic() <= P.cooldown_secs, "the cooldown is its length, not 2 h"

    world.clock.advance(P.cooldown_secs + 1)
    await _delivered_when_due(world, "t-cool")


async def test_a_wall_clock_step_2_h_ahead_does_not_end_a_cooldown_early() -> None:
    world = trigger_world(FakePanes())
    world.state.counts_failures = True
    await _fail_into_cooldown(world)
    world.clock.step_wall(+TWO_HOURS)

    due = await _cooling(world, "t-cool")
    assert 0 < due - world.clock.monotonic() <= P.cooldown_secs

    world.clock.advance(P.cooldown_secs + 1)
    await _delivered_when_due(world, "t-cool")
