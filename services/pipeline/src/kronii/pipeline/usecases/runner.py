"""The run loop: drives each round through the core's orchestration table, row for row.

`Runner` wires the use cases around one shared `Standing` (the machine between rounds, the
rate-limit ledgers, the Router's and Planner's histories): `trigger_intake` takes triggers and opens
rounds, `rounds` runs a round's states, `capture_wait` its screenshot, `delivery` how it ends. All
I/O goes through `ports.RunnerPorts`, so `kronii replay` and the tests run it with in-process parts
and the service with the networked ones. Time comes from `clock` (kronii.foundation.clock): its
epoch-anchored monotonic milliseconds for every duration and deadline, its wall clock for what a run
records and the status shows; never from the system directly.

It is driven by two calls: `submit(trigger)` for every trigger as it arrives (never waits on a
round), and `advance()`, which releases due batches and runs their rounds to the end. A lock that
arrives while a round runs is seen at the round's next Routing; a high-priority trigger while the
round waits for a capture preempts it (additional guard 1)."""

from __future__ import annotations

from collections import deque
from typing import Any

from kronii.desktop.hold import DesktopHold, DesktopHolds
from kronii.foundation.clock import Clock, on_the_wall_ms
from kronii.pipeline.core.round import RunnerConfig
from kronii.pipeline.core.runs import RunRecord
from kronii.pipeline.core.states import RunState, Trigger
from kronii.pipeline.ports import RunnerPorts
from kronii.pipeline.usecases.round_state import Standing
from kronii.pipeline.usecases.run_round import Rounds
from kronii.pipeline.usecases.take_trigger import TriggerIntake

__all__ = ["Runner"]


class Runner:
    def __init__(
        self,
        ports: RunnerPorts,
        clock: Clock,
        config: RunnerConfig | None = None,
    ) -> None:
        config = config or RunnerConfig()
        self._standing = Standing()
        self._clock = clock
        rounds = Rounds(self._standing, ports, config, clock)
        self._intake = TriggerIntake(self._standing, rounds, ports.audit, config, clock)

    # ---- what the service shows ----------------------------------------------------------------

    @property
    def state(self) -> RunState:
        current = self._standing.current
        return current.state if current is not None else self._standing.state

    @property
    def locked(self) -> bool:
        return self._standing.locked

    @property
    def dropped_title_churn(self) -> int:
        return self._intake.intake.dropped_title_churn

    @property
    def scheduler_answered(self) -> bool | None:
        """None before the first admission; then whether the scheduler answered the last one."""
        return self._standing.scheduler_answered

    @property
    def runs_started(self) -> int:
        return self._standing.runs_started

    @property
    def model_calls(self) -> int:
        return self._standing.model_calls

    @property
    def recent_notes(self) -> deque[tuple[str, tuple[str, ...]]]:
        """What each of the latest runs noted on its way (capture outcome, refusals, deferrals)."""
        return self._standing.recent_notes

    def status(self) -> dict[str, Any]:
        standing = self._standing
        deferral = standing.deferral
        current = standing.current
        # Kept on the duration clock; shown on the wall clock.
        cooling = standing.cooling_until_ms
        return {
            "state": self.state.value,
            "locked": standing.locked,
            "cooling_until_ms": on_the_wall_ms(self._clock, cooling) if cooling else None,
            "deferred": None
            if deferral is None
            else {
                "reason": deferral.reason.value,
                "resume_at_ms": on_the_wall_ms(self._clock, deferral.resume_at_ms),
            },
            "pending_batches": self._intake.intake.pending + len(standing.waiting),
            "dropped_title_churn": self._intake.intake.dropped_title_churn,
            "runs_started": standing.runs_started,
            "run_id": current.run_id if current is not None else None,
            "recent_notes": {run_id: list(notes) for run_id, notes in standing.recent_notes},
        }

    # ---- input and the loop --------------------------------------------------------------------

    async def submit(self, trigger: Trigger) -> str:
        """Take one external trigger; returns what became of it (never waits on a round)."""
        return await self._intake.submit(trigger)

    @property
    def desktop_holds(self) -> DesktopHolds:
        """The broker's latest word on each session (the notice desk reads it too)."""
        return self._standing.desktop_holds

    def desktop_changed(self, hold: DesktopHold) -> None:
        """The input broker's latest word on one session (kronii.broker.control). While the person
        holds the desktop, rounds still run but end silent: no notification is sent."""
        self._standing.desktop_holds = self._standing.desktop_holds.updated(hold)

    async def advance(self) -> list[RunRecord]:
        """Release due batches and run their rounds; returns the records of the rounds that ended."""
        return await self._intake.advance()
