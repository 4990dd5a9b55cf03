"""Running a held plan: one nothing flagged (made without execute) on the caller's word, or one a
person approved. Runs go one at a time, in the background, under the desktop's one lock; the executor
does the steps (execute_plan)."""

from __future__ import annotations

import asyncio
import logging

from kronii.foundation.clock import Clock
from kronii.vision.core.plan_book import PlanBook, PlanRecord
from kronii.vision.core.plans import PlanEvent, PlanState
from kronii.vision.usecases.execute_plan import Executor

__all__ = ["RunPlan"]

log = logging.getLogger(__name__)


class RunPlan:
    def __init__(self, book: PlanBook, executor: Executor, clock: Clock) -> None:
        self._book = book
        self._executor = executor
        self._clock = clock
        self._running: set[asyncio.Task[None]] = set()
        self._desktop = asyncio.Lock()

    def __call__(self, plan_id: str) -> PlanRecord:
        """Run a plan that nothing flagged (one made with execute false); a flagged one needs approve."""
        record = self._book.get(plan_id)
        if record.state is not PlanState.READY:
            self._book.move(record, PlanEvent.START, self._clock.wall_ms())  # raises the table's sentence
        self.start(record)
        return record

    def start(self, record: PlanRecord) -> None:
        task = asyncio.create_task(self._execute(record), name=f"vision-plan-{record.id}")
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def _execute(self, record: PlanRecord) -> None:
        async with self._desktop:  # one plan at a time: there is one desktop
            try:
                await self._executor.run(record)
            except Exception:
                log.exception("vision: plan %s failed", record.id)
                if record.active:
                    self._book.move(record, PlanEvent.FAIL, self._clock.wall_ms(), "the executor failed")

    async def drain(self) -> None:
        for task in list(self._running):
            task.cancel()
        await asyncio.gather(*self._running, return_exceptions=True)
