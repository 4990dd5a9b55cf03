"""Durations are measured on the monotonic clock: a step of the wall clock (+2 h and back, as NTP or
a person setting the time does) neither stretches a 60 s deferral or cooldown to 2 h nor ends one
early, while what a run records and the status shows stays on the wall clock. The clock is the
service's own (kronii.foundation.clock.SystemClock) with its time sources injected: `advance` is time passing,
`step_wall` moves only the wall clock; the runner runs in process on the fakes of its ports."""

from __future__ import annotations

from kronii.foundation.clock import SystemClock
from kronii.pipeline.core.answers import Admit
from kronii.pipeline.core.round import RunnerConfig
from kronii.pipeline.core.states import Priority, RunState
from kronii.pipeline.usecases.runner import Runner

from tests.unit.pipeline.runner_fakes import START_MS, Fakes, focus

TWO_HOURS_MS = 2 * 3_600_000
BACKOFF_MS = 60_000
MS = 1_000_000  # nanoseconds


class SteppingTime:
    """The two time sources SystemClock reads, in nanoseconds."""

    def __init__(self) -> None:
        self.wall = START_MS * MS
        self.monotonic = 5_000 * MS

    def advance(self, ms: int) -> None:
        self.wall += ms * MS
        self.monotonic += ms * MS

    def step_wall(self, ms: int) -> None:
        self.wall += ms * MS

    def clock(self) -> SystemClock:
        return SystemClock(wall_ns=lambda: self.wall, monotonic_ns=lambda: self.monotonic)


def _state(runner: Runner) -> RunState:
    # Read through a call: the state changes under awaits, which type narrowing does not see.
    return runner.state


async def _deferred(fakes: Fakes, clock: SystemClock) -> Runner:
    """One round the scheduler refuses: the pipeline defers for the 60 s backoff."""
    fakes.scheduler.answer = Admit(False, "busy")
    runner = Runner(fakes.ports(), clock, RunnerConfig(defer_backoff_ms=BACKOFF_MS))
    await runner.submit(focus(clock.monotonic_ms(), priority=Priority.HIGH))
    await runner.advance()
    assert runner.state is RunState.DEFERRED
    fakes.scheduler.answer = Admit(True)
    return runner


async def test_a_60_s_deferral_lasts_60_s_when_the_wall_clock_steps_2_h_ahead_and_back() -> None:
    time, fakes = SteppingTime(), Fakes()
    clock = time.clock()
    time.step_wall(+TWO_HOURS_MS)
    runner = await _deferred(fakes, clock)  # deferred while the wall clock is 2 h ahead
    [record] = fakes.runs.records.values()
    assert record.created_at * 1000 == clock.wall_ms(), "the run records wall time"
    assert runner.status()["deferred"]["resume_at_ms"] == clock.wall_ms() + BACKOFF_MS
    time.step_wall(-TWO_HOURS_MS)  # and back

    time.advance(BACKOFF_MS - 1)
    assert await runner.advance() == [] and runner.state is RunState.DEFERRED
    time.advance(1)
    [resumed] = await runner.advance()

    assert resumed.trigger_summary == "tick x1" and resumed.decision == "notify", "60 s, not 2 h"


async def test_a_wall_clock_step_2_h_ahead_does_not_end_a_deferral_early() -> None:
    time, fakes = SteppingTime(), Fakes()
    clock = time.clock()
    runner = await _deferred(fakes, clock)

    time.step_wall(+TWO_HOURS_MS)
    time.advance(BACKOFF_MS // 2)

    assert await runner.advance() == [] and runner.state is RunState.DEFERRED
    assert runner.status()["deferred"]["resume_at_ms"] == clock.wall_ms() + BACKOFF_MS // 2
    time.advance(BACKOFF_MS // 2)
    [resumed] = await runner.advance()
    assert resumed.decision == "notify"


async def test_a_cooldown_is_neither_stretched_nor_cut_by_a_wall_clock_step() -> None:
    time, fakes = SteppingTime(), Fakes()
    fakes.backend.min_cooldown_ms = 90_000
    clock = time.clock()
    runner = Runner(fakes.ports(), clock)
    await runner.submit(focus(clock.monotonic_ms(), priority=Priority.HIGH))
    await runner.advance()
    assert runner.state is RunState.COOLING

    time.step_wall(+TWO_HOURS_MS)
    time.advance(89_999)
    await runner.advance()
    assert runner.state is RunState.COOLING, "a step ahead does not cut it short"
    assert runner.status()["cooling_until_ms"] == clock.wall_ms() + 1
    time.step_wall(-TWO_HOURS_MS)
    time.advance(1)
    await runner.advance()
    assert _state(runner) is RunState.IDLE, "nor a step back stretch it: 90 s"
