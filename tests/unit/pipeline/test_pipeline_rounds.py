"""kronii.pipeline.usecases.run_round (with round_state's Stepper and role_calls) in process: a round from its
trigger to a notification, state by state, with fakes of every port and a clock the test moves."""

from __future__ import annotations

from kronii.pipeline.core.limits import RateLimits
from kronii.pipeline.core.roles.values import Role
from kronii.pipeline.core.round import RunnerConfig
from kronii.pipeline.core.states import Priority, RunState
from kronii.pipeline.usecases.runner import Runner

from tests.unit.pipeline.runner_fakes import FakeClock, Fakes, focus


async def _one_round(fakes: Fakes, clock: FakeClock, config: RunnerConfig | None = None) -> Runner:
    runner = Runner(fakes.ports(), clock, config)
    await runner.submit(focus(clock.now_ms, priority=Priority.HIGH))
    await runner.advance()
    return runner


async def test_a_round_goes_from_its_trigger_to_a_notification_and_a_cooldown() -> None:
    fakes, clock = Fakes(), FakeClock()

    runner = await _one_round(fakes, clock)

    [record] = fakes.runs.records.values()
    assert [visit.state for visit in record.states] == [
        "idle",
        "collecting",
        "routing",
        "redacting",
        "extracting",
        "synthesizing",
        "planning",
        "acting",
        "cooling",
    ]
    assert record.decision == "notify" and record.notification_id == "n-1"
    assert record.route == "base_only/extract"
    [(run_id, notification, source_key)] = fakes.notifier.sent
    assert run_id == record.run_id and notification.candidate_key == "review:notes"
    assert source_key == "suggestion:review"
    assert [call.role for call in record.model_calls] == ["extractor", "synthesizer", "planner", "notifier"]
    assert runner.model_calls == 4
    assert fakes.audit.actions() == ["pipeline.redaction", "pipeline.run"]
    assert runner.state is RunState.COOLING and record.finished_at == clock.now_ms / 1000


async def test_the_extractor_reads_the_redacted_base_snapshot_of_the_triggers_focus() -> None:
    fakes, clock = Fakes(), FakeClock()

    await _one_round(fakes, clock)

    [context] = fakes.backend.contexts
    [base] = [item for item in context.budget.items if item.name == "base"]
    assert "window title: notes.md - Visual Studio Code" in base.text
    assert context.now_ms == clock.now_ms


async def test_a_role_that_fails_is_noted_and_the_round_goes_on_with_nothing_from_it() -> None:
    fakes, clock = Fakes(), FakeClock()
    fakes.backend.failing_role = Role.EXTRACTOR

    await _one_round(fakes, clock)

    [record] = fakes.runs.records.values()
    assert "role call failed: RuntimeError" in record.notes
    assert [call.role for call in record.model_calls] == ["synthesizer", "planner", "notifier"]
    assert record.states[-1].state == "cooling"


async def test_without_an_answer_from_the_scheduler_the_runners_own_rate_limits_decide() -> None:
    fakes, clock = Fakes(), FakeClock()
    fakes.scheduler.answer = None
    fakes.backend.min_cooldown_ms = 0
    limits = RateLimits(global_max=1, global_window_ms=600_000, per_app_max=1, per_app_window_ms=600_000)
    runner = await _one_round(fakes, clock, RunnerConfig(run_limits=limits))
    assert runner.scheduler_answered is False

    clock.advance(1_000)
    await runner.submit(focus(clock.now_ms, title="other.md - Visual Studio Code", priority=Priority.HIGH))
    [second] = await runner.advance()

    assert second.decision == "deferred:rate_limited"
    assert any(note.startswith("rate limited:") for note in second.notes)
    assert runner.state is RunState.DEFERRED
