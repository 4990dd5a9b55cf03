"""The cooldown of section 14 follows real failures of the agent's runtime only (issue 28): a person
typing, a dialog or a deferral never starts it, a delivery ends it, it holds only the agent that
failed, and it says why and for how long. The policy is pure (a number for the clock); the use case
runs in process on the fakes of its ports, with an injected clock."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator

import pytest
from kronii.supervisor.core.agent_state import Delivery
from kronii.supervisor.core.job import RETRY_ADVICE
from kronii.supervisor.core.model import ErrorCode, GuardFacts, PaneFacts, Result
from kronii.supervisor.core.params import SupervisorParams
from kronii.supervisor.core.policy import cooldown_pause, cooldown_until, runtime_failure
from kronii.supervisor.v1 import supervisor_pb2 as pb

from tests.unit.supervisor.trigger_fakes import CALLER, FakePanes, TriggerWorld, runtime, trigger_world

P = SupervisorParams()
NOW = 1_000_000.0

# What a person or the agent's screen causes, and every deferral: never a failure of the runtime.
NOT_THE_RUNTIME = (
    ErrorCode.COLLISION_MAX_DEFER,
    ErrorCode.OPERATOR_BUSY,
    ErrorCode.AGENT_BLOCKED,
    ErrorCode.AGENT_STARTING,
    ErrorCode.AGENT_BUSY,
    ErrorCode.USER_HOLDS_DESKTOP,
    ErrorCode.TMUX_UNAVAILABLE,
    ErrorCode.THREAD_AUTO_BLOCKED,
    ErrorCode.TRIGGER_LOOP_SUPPRESSED,
    ErrorCode.TRIGGER_RATE_LIMITED,
    ErrorCode.TRIGGER_COOLDOWN,
    ErrorCode.RUNTIME_PAUSED,
    ErrorCode.PANE_NOT_AGENT,
    ErrorCode.RUNTIME_OFFLINE,
)
REAL_FAILURES = (
    (Result.FAILED, ErrorCode.WRITE_FAILED),
    (Result.TYPED_NOT_SUBMITTED, ErrorCode.TYPED_NOT_SUBMITTED),
    (Result.TIMEOUT, ErrorCode.ACK_TIMEOUT),
    (Result.FAILED, ErrorCode.SPAWN_FAILED),
    (Result.FAILED, ErrorCode.FALLBACK_EXHAUSTED),
)


@pytest.mark.parametrize("code", NOT_THE_RUNTIME, ids=str)
def test_a_person_a_dialog_or_a_refusal_never_counts_against_the_agents_runtime(code: ErrorCode) -> None:
    assert runtime_failure(Result.FAILED, code) == ""


@pytest.mark.parametrize(("result", "code"), REAL_FAILURES, ids=lambda v: str(v))
def test_a_real_failure_of_the_agents_runtime_counts_and_says_why(result: Result, code: ErrorCode) -> None:
    assert len(runtime_failure(result, code)) > 10


@pytest.mark.parametrize("result", [Result.DELIVERED, Result.DEFERRED, Result.ALREADY_ACTIVE], ids=str)
def test_a_delivery_or_a_deferral_never_counts_whatever_its_code(result: Result) -> None:
    assert all(runtime_failure(result, code) == "" for code in ErrorCode)


def test_every_code_is_either_a_runtime_failure_or_not_one_listed_here() -> None:
    classified = set(NOT_THE_RUNTIME) | {code for _, code in REAL_FAILURES}
    assert set(ErrorCode) - classified <= {ErrorCode.RESUME_FAILED, ErrorCode.TRIGGER_IN_FLIGHT}


def test_the_pause_starts_at_the_threshold_and_doubles_up_to_its_maximum() -> None:
    pauses = [cooldown_pause(streak, P) for streak in range(8)]
    assert pauses == [0, 0, 0, P.cooldown_secs, 2 * P.cooldown_secs, 4 * P.cooldown_secs, 60, 60]
    assert P.cooldown_max_secs == 60 and P.cooldown_secs == 15


def test_a_last_failure_stamped_ahead_of_the_clock_holds_nothing() -> None:
    # A monotonic clock that started again (a reboot) must not hold an agent for days.
    ahead = GuardFacts(consecutive_failures=5, last_failure_at=NOW + 86_400)
    assert cooldown_until(ahead, P, NOW) is None
    recent = GuardFacts(consecutive_failures=3, last_failure_at=NOW - 5)
    assert cooldown_until(recent, P, NOW) == NOW - 5 + P.cooldown_secs


# ---- the use case, in process ---------------------------------------------------------------------


def request(trigger_id: str, agent_id: str = "agent", prompt: str = "") -> pb.TriggerRuntimeRequest:
    return pb.TriggerRuntimeRequest(
        trigger_id=trigger_id, agent_id=agent_id, workspace_id="ws", prompt=prompt or f"prompt {trigger_id}"
    )


def counting_world(panes: FakePanes, *agents: str) -> TriggerWorld:
    records = [runtime(f"rt-{n}", f"%{n}", agent) for n, agent in enumerate(agents or ("agent",), 1)]
    world = trigger_world(panes, *records)
    world.state.counts_failures = True
    return world


async def _fail_writes(world: TriggerWorld, agent: str, pane: str, times: int) -> None:
    world.panes.failing.add(pane)
    for n in range(times):
        failed = await world.desk.trigger(request(f"fail-{agent}-{n}", agent), CALLER)
        assert (failed.result, failed.error_code) == ("failed", "WRITE_FAILED"), failed
    world.panes.failing.discard(pane)


async def test_five_triggers_into_an_agent_a_person_types_in_all_fail_collision_max_defer_without_a_cooldown() -> (
    None
):
    # Issue 28: each COLLISION_MAX_DEFER was counted as a failure, so from the third on the rest
    # waited 60 s each in TRIGGER_COOLDOWN (5.7 minutes for five).
    panes = FakePanes(PaneFacts(draft="please also refactor the"))
    world = counting_world(panes)
    deferred = await asyncio.gather(*(world.desk.trigger(request(f"t-{n}"), CALLER) for n in range(5)))
    assert {(o.result, o.error_code) for o in deferred} == {("deferred", "OPERATOR_BUSY")}

    world.clock.advance(P.max_defer_secs + 1)
    await world.desk.take_due()
    ended = await asyncio.gather(*(world.desk.inflight[f"t-{n}"] for n in range(5)))

    assert [(o.result, o.error_code) for o in ended] == [("failed", "COLLISION_MAX_DEFER")] * 5
    assert all(o.detail == "a person kept typing past the maximum defer" for o in ended)
    assert world.state.streaks == {} and panes.written == []
    panes.facts = PaneFacts()  # the person sent their text: the next trigger goes at once
    assert (await world.desk.trigger(request("t-after"), CALLER)).result == "delivered"


async def test_three_real_failures_cool_the_agent_down_with_a_sentence_saying_why_and_how_long() -> None:
    world = counting_world(FakePanes())
    await _fail_writes(world, "agent", "%1", P.cooldown_failures)
    world.clock.advance(3)

    cooling = await world.desk.trigger(request("t-cool"), CALLER)

    assert (cooling.result, cooling.error_code) == ("deferred", "TRIGGER_COOLDOWN")
    assert cooling.detail == (
        "the agent's last 3 triggers failed (writing the prompt to its pane failed); waiting 12 s "
        "before typing to it again (a delivery ends the wait; other agents are not held)"
    )
    assert world.records.rows[-1]["detail"] == cooling.detail
    world.clock.advance(P.cooldown_secs)
    await world.desk.take_due()
    assert (await world.desk.inflight["t-cool"]).result == "delivered"
    assert world.state.streaks == {}, "a delivery ends the streak"


async def test_a_cooldown_on_one_agent_never_holds_a_trigger_for_another() -> None:
    world = counting_world(FakePanes(), "sick", "well")
    await _fail_writes(world, "sick", "%1", P.cooldown_failures)

    sick, well = await asyncio.gather(
        world.desk.trigger(request("t-sick", "sick"), CALLER),
        world.desk.trigger(request("t-well", "well"), CALLER),
    )

    assert (sick.result, sick.error_code) == ("deferred", "TRIGGER_COOLDOWN")
    assert (well.result, well.delivery_backend) == ("delivered", "tmux")
    assert world.panes.written == [("%2", "prompt t-well")]


async def test_a_delivery_between_failures_starts_the_count_again() -> None:
    world = counting_world(FakePanes())
    await _fail_writes(world, "agent", "%1", P.cooldown_failures - 1)
    assert (await world.desk.trigger(request("t-ok"), CALLER)).result == "delivered"
    await _fail_writes(world, "agent", "%1", P.cooldown_failures - 1)

    assert (await world.desk.trigger(request("t-next"), CALLER)).result == "delivered"


@contextlib.asynccontextmanager
async def time_passing(world: TriggerWorld, step: float) -> AsyncIterator[None]:
    """The injected clock moves `step` seconds every few real milliseconds (an ack wait's deadline
    is on it)."""

    async def tick() -> None:
        while True:
            await asyncio.sleep(0.002)
            world.clock.advance(step)

    task = asyncio.create_task(tick())
    try:
        yield
    finally:
        task.cancel()


async def test_a_timeout_tells_the_caller_never_to_retry_it_under_a_new_id_and_its_id_returns_it() -> None:
    world = counting_world(FakePanes(seen=Delivery.PENDING))
    ask = request("t-silent")
    ask.ack_timeout_ms = 50
    async with time_passing(world, 0.05):
        outcome = await world.desk.trigger(ask, CALLER)

    assert (outcome.result, outcome.error_code) == ("timeout", "ACK_TIMEOUT")
    assert outcome.detail.endswith(RETRY_ADVICE) and "same trigger_id" in outcome.detail
    # (The fake pane logs each delivery attempt; a real retry presses the submit key only.)
    attempts = list(world.panes.written)
    again = await world.desk.trigger(request("t-silent", prompt="typed again?"), CALLER)
    assert (again.result, again.detail, again.duplicate) == ("timeout", outcome.detail, True)
    assert world.panes.written == attempts, "the repeat typed nothing"


def test_the_cooldown_sentence_reads_as_one() -> None:
    from kronii.supervisor.core.job import cooldown_detail

    text = cooldown_detail(3, "the prompt stayed in its input box", 41.6)
    assert re.fullmatch(r"the agent's last 3 triggers failed \(the prompt stayed in its input box\); "
                        r"waiting 42 s before typing to it again \(.+\)", text)  # fmt: skip
