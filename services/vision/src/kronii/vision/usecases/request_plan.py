"""A plan asked for over the API: made (make_plan) and, when the caller said execute and the safety
layer flagged nothing, started at once (run_plan)."""

from __future__ import annotations

from kronii.vision.core.commands import PlanCommand
from kronii.vision.core.plan_book import PlanRecord
from kronii.vision.core.plans import PlanState
from kronii.vision.usecases.make_plan import MakePlan
from kronii.vision.usecases.run_plan import RunPlan

__all__ = ["RequestPlan"]


class RequestPlan:
    def __init__(self, make: MakePlan, runs: RunPlan) -> None:
        self._make = make
        self._runs = runs

    async def __call__(self, command: PlanCommand) -> PlanRecord:
        record = await self._make(command)
        if record.state is PlanState.READY and command.execute:
            self._runs.start(record)
        return record
