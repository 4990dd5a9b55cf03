"""kronii.pipeline.usecases.deliver_round in process: how a round ends — notified, kept silent, cooled down with
its plan handed to the scheduler, or deferred — with fakes of the ports and a clock the test moves."""

from __future__ import annotations

from kronii.pipeline.core.answers import Admit
from kronii.pipeline.core.round import RunnerConfig
from kronii.pipeline.core.states import Priority, RunState
from kronii.pipeline.usecases.runner import Runner

from tests.unit.pipeline.runner_fakes import FakeClock, Fakes, focus


async def _one_round(fakes: Fakes, clock: FakeClock, config: RunnerConfig | None = None) -> Runner:
    runner = Runner(fakes.ports(), clock, config)
    await runner.submit(focus(clock.now_ms, priority=Priority.HIGH))
    await runner.advance()
    return runner


async def test_the_plan_goes_to_the_scheduler_and_the_cooldown_is_the_plans() -> None:
    fakes, clock = Fakes(), FakeClock()
    fakes.backend.min_cooldown_ms = 90_000

    runner = await _one_round(fakes, clock)

    [(run_id, app, plan, now_ms)] = fakes.scheduler.plans
    assert app == "code" and now_ms == clock.now_ms and plan.min_cooldown_ms == 90_000
    assert runner.status()["cooling_until_ms"] == clock.now_ms + 90_000
    assert fakes.runs.records[run_id].next_wakeup_at == plan.next_wakeup_ms / 1000


async def test_the_cooldown_is_capped_by_the_configured_maximum() -> None:
    fakes, clock = Fakes(), FakeClock()
    fakes.backend.min_cooldown_ms = 10 * 3_600_000

    runner = await _one_round(fakes, clock, RunnerConfig(max_cooldown_ms=3_600_000))

    assert runner.status()["cooling_until_ms"] == clock.now_ms + 3_600_000


async def test_a_muted_kind_of_suggestion_keeps_the_round_silent() -> None:
    fakes, clock = Fakes(), FakeClock()
    fakes.notifier.muted_keys["suggestion:review"] = "snoozed until later"

    runner = await _one_round(fakes, clock)

    [record] = fakes.runs.records.values()
    assert record.decision == "silent" and fakes.notifier.sent == []
    assert "silent: review suggestions snoozed until later" in record.notes
    assert "notifier" not in [call.role for call in record.model_calls]
    assert runner.state is RunState.COOLING


async def test_a_planner_that_stays_silent_sends_nothing_but_still_cools_down() -> None:
    fakes, clock = Fakes(), FakeClock()
    fakes.backend.notifies = False

    runner = await _one_round(fakes, clock)

    [record] = fakes.runs.records.values()
    assert record.decision == "silent" and fakes.notifier.sent == []
    assert [visit.state for visit in record.states][-2:] == ["planning", "cooling"]
    assert len(fakes.scheduler.plans) == 1 and runner.state is RunState.COOLING


async def test_a_refusal_defers_until_the_schedulers_retry_after_when_longer_than_the_backoff() -> None:
    fakes, clock = Fakes(), FakeClock()
    fakes.scheduler.answer = Admit(False, "too many runs", retry_after_ms=300_000)

    runner = await _one_round(fakes, clock, RunnerConfig(defer_backoff_ms=60_000))

    [record] = fakes.runs.records.values()
    assert record.decision == "deferred:rate_limited"
    assert "scheduler refused: too many runs" in record.notes
    assert runner.status()["deferred"] == {"reason": "rate_limited", "resume_at_ms": clock.now_ms + 300_000}
    assert fakes.notifier.sent == [] and fakes.backend.contexts == []


async def test_a_deferral_resumes_with_a_round_once_its_backoff_has_passed() -> None:
    fakes, clock = Fakes(), FakeClock()
    fakes.scheduler.answer = Admit(False, "busy")
    runner = await _one_round(fakes, clock, RunnerConfig(defer_backoff_ms=60_000))
    fakes.scheduler.answer = Admit(True)

    clock.advance(59_999)
    assert await runner.advance() == []
    clock.advance(1)
    [resumed] = await runner.advance()

    assert resumed.trigger_summary == "tick x1" and resumed.decision == "notify"
