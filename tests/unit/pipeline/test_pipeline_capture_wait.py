"""kronii.pipeline.usecases.await_capture in process: a round that needs a screenshot asks the capture
service, then attaches the screenshot, degrades when the capture fails or times out, or starts over
when a high-priority trigger preempts it (additional guard 1)."""

from __future__ import annotations

import asyncio

from kronii.pipeline.core.answers import CaptureOutcome
from kronii.pipeline.core.round import RunnerConfig
from kronii.pipeline.core.states import CaptureStatus, Priority, RunState
from kronii.pipeline.usecases.runner import Runner

from tests.unit.pipeline.runner_fakes import SCREENCAPTURE, FakeClock, Fakes, focus


def _meeting_fakes(outcome: CaptureOutcome | None) -> Fakes:
    fakes = Fakes()
    fakes.plugins.infos_answer = [SCREENCAPTURE]
    fakes.capture.outcome_answer = outcome
    return fakes


async def _meeting_round(fakes: Fakes, clock: FakeClock, config: RunnerConfig | None = None) -> Runner:
    runner = Runner(fakes.ports(), clock, config)
    await runner.submit(focus(clock.now_ms, app="zoom", title="Zoom Meeting"))
    clock.advance(2_000)
    await runner.advance()
    return runner


async def test_a_persisted_screenshot_is_attached_to_what_the_extractor_reads() -> None:
    fakes, clock = _meeting_fakes(CaptureOutcome(CaptureStatus.PERSISTED, "shot-1")), FakeClock()

    await _meeting_round(fakes, clock)

    [record] = fakes.runs.records.values()
    assert "awaiting_capture" in [visit.state for visit in record.states]
    assert "capture persisted" in record.notes and "screencapture" in record.plugins_used
    assert fakes.capture.requested == [Priority.NORMAL]
    [context] = fakes.backend.contexts
    assert "shot-1" in [item.name for item in context.budget.items]


async def test_a_failed_capture_degrades_the_round_to_the_other_context() -> None:
    fakes, clock = _meeting_fakes(CaptureOutcome(CaptureStatus.FAILED, reason="no display")), FakeClock()

    await _meeting_round(fakes, clock)

    [record] = fakes.runs.records.values()
    assert "capture failed: degraded to the other context" in record.notes
    [context] = fakes.backend.contexts
    assert all(item.name != "shot-1" for item in context.budget.items)
    assert record.decision == "notify"


async def test_a_capture_that_does_not_answer_within_its_ttl_times_out() -> None:
    fakes, clock = _meeting_fakes(None), FakeClock()

    await _meeting_round(fakes, clock, RunnerConfig(capture_ttl_ms=20))

    [record] = fakes.runs.records.values()
    assert "capture timed out" in record.notes
    assert record.states[-1].state == "cooling"


async def test_a_high_priority_trigger_cancels_the_pending_capture_and_the_round_starts_over() -> None:
    fakes, clock = _meeting_fakes(None), FakeClock()
    runner = Runner(fakes.ports(), clock)
    await runner.submit(focus(clock.now_ms, app="zoom", title="Zoom Meeting"))
    clock.advance(2_000)
    advancing = asyncio.ensure_future(runner.advance())
    for _ in range(100):
        if runner.state is RunState.AWAITING_CAPTURE:
            break
        await asyncio.sleep(0.001)
    assert runner.state is RunState.AWAITING_CAPTURE

    new_focus = focus(
        clock.now_ms, app="code", title="notes.md - Visual Studio Code", window_id=9, priority=Priority.HIGH
    )
    assert await runner.submit(new_focus) == "opened"
    [record] = await asyncio.wait_for(advancing, 5)

    assert fakes.capture.cancelled == ["job-1"]
    assert "capture cancelled by a high-priority trigger" in record.notes
    [context] = fakes.backend.contexts
    [base] = [item for item in context.budget.items if item.name == "base"]
    assert "notes.md" in base.text and "Zoom" not in base.text
