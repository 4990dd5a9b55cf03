"""The one front the scheduler's API calls (HTTP, gRPC and the NATS handlers alike)."""

from __future__ import annotations

from kronii.scheduler.core.commands import PlanCommand, PlanOutcome, ScheduleSnapshot
from kronii.scheduler.core.model import Admission, AdmitInput
from kronii.scheduler.usecases.admit_run import AdmitRun
from kronii.scheduler.usecases.fire_wakeups import FireDueWakeups
from kronii.scheduler.usecases.show_schedule import ShowSchedule
from kronii.scheduler.usecases.submit_plan import SubmitPlan

__all__ = ["SchedulerOperations"]


class SchedulerOperations:
    def __init__(
        self, submit_plan: SubmitPlan, admit: AdmitRun, schedule: ShowSchedule, fire_due: FireDueWakeups
    ) -> None:
        self._submit_plan = submit_plan
        self._admit = admit
        self._schedule = schedule
        self._fire_due = fire_due

    async def submit_plan(self, command: PlanCommand) -> PlanOutcome:
        """Apply a Planner's plan; raises InvalidRequest naming the field, StoreUnavailable when its
        audit row (and so the plan) could not be committed."""
        return await self._submit_plan(command)

    async def admit(self, command: AdmitInput) -> Admission:
        """May a run start now? Raises InvalidRequest naming the field."""
        return await self._admit(command)

    async def schedule(self) -> ScheduleSnapshot:
        return await self._schedule()

    async def fire_due(self) -> int:
        """Publish one Tick per due wake-up now; returns how many fired."""
        return await self._fire_due()
