"""kronii.pipeline.usecases.take_trigger in process: triggers coalesced into one round when their window
closes, the lock acting on the machine between rounds, and the standing states letting rounds through."""

from __future__ import annotations

import pytest
from kronii.pipeline.core.round import RunnerConfig
from kronii.pipeline.core.states import Priority, RunState, Trigger, TriggerKind
from kronii.pipeline.usecases.runner import Runner

from tests.unit.pipeline.runner_fakes import FakeClock, Fakes, focus


async def test_triggers_within_the_coalesce_window_make_one_round_once_it_closes() -> None:
    fakes, clock = Fakes(), FakeClock()
    runner = Runner(fakes.ports(), clock, RunnerConfig(coalesce_window_ms=1_500))
    outcomes = []
    for _ in range(3):
        outcomes.append(await runner.submit(focus(clock.now_ms)))
        clock.advance(100)

    assert outcomes == ["opened", "merged", "merged"]
    assert await runner.advance() == []  # the window is still open
    assert runner.status()["pending_batches"] == 1

    clock.advance(1_500)
    records = await runner.advance()

    assert [record.trigger_summary for record in records] == ["focus_changed x3"]
    assert runner.runs_started == 1 and runner.status()["pending_batches"] == 0


async def test_a_high_priority_trigger_is_released_without_waiting_for_the_window() -> None:
    fakes, clock = Fakes(), FakeClock()
    runner = Runner(fakes.ports(), clock)

    await runner.submit(focus(clock.now_ms, priority=Priority.HIGH))
    records = await runner.advance()

    assert [record.trigger_summary for record in records] == ["focus_changed x1 (high priority)"]


async def test_a_lock_while_idle_defers_the_machine_and_audits_it() -> None:
    fakes, clock = Fakes(), FakeClock()
    runner = Runner(fakes.ports(), clock)

    assert await runner.submit(Trigger(TriggerKind.LOCK_START, clock.now_ms)) == "locked"

    assert runner.locked and runner.state is RunState.DEFERRED
    assert runner.status()["deferred"]["reason"] == "locked"
    assert fakes.audit.actions() == ["pipeline.defer"]


async def test_unlocking_after_a_lock_opens_a_resume_round_without_the_backlog() -> None:
    fakes, clock = Fakes(), FakeClock()
    runner = Runner(fakes.ports(), clock)
    await runner.submit(Trigger(TriggerKind.LOCK_START, clock.now_ms))
    await runner.submit(focus(clock.now_ms))
    clock.advance(2_000)
    assert await runner.advance() == []  # locked: the focus change opens no round

    await runner.submit(Trigger(TriggerKind.LOCK_END, clock.now_ms))
    records = await runner.advance()

    assert [record.trigger_summary for record in records] == ["lock_end x1 (high priority)"]
    assert not runner.locked


async def test_during_the_cooldown_only_a_high_priority_trigger_opens_a_round() -> None:
    fakes, clock = Fakes(), FakeClock()
    fakes.backend.min_cooldown_ms = 60_000
    runner = Runner(fakes.ports(), clock)
    await runner.submit(focus(clock.now_ms, priority=Priority.HIGH))
    await runner.advance()
    assert runner.state is RunState.COOLING

    await runner.submit(focus(clock.now_ms, title="other.md - Visual Studio Code"))
    clock.advance(2_000)
    assert await runner.advance() == []
    assert runner.state is RunState.COOLING

    await runner.submit(focus(clock.now_ms, title="third.md - Visual Studio Code", priority=Priority.HIGH))
    assert len(await runner.advance()) == 1
    assert runner.runs_started == 2


async def test_the_cooldown_ends_on_its_own_once_its_time_has_passed() -> None:
    fakes, clock = Fakes(), FakeClock()
    fakes.backend.min_cooldown_ms = 60_000
    runner = Runner(fakes.ports(), clock)
    await runner.submit(focus(clock.now_ms, priority=Priority.HIGH))
    await runner.advance()

    clock.advance(59_999)
    await runner.advance()
    assert runner.status()["state"] == "cooling"
    clock.advance(1)
    await runner.advance()

    assert runner.status()["state"] == "idle"


async def test_the_pipelines_own_signals_are_refused_as_triggers() -> None:
    runner = Runner(Fakes().ports(), FakeClock())

    with pytest.raises(ValueError, match="not an external trigger"):
        await runner.submit(Trigger(TriggerKind.INTERNAL, 0))
