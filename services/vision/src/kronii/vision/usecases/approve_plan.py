"""A person's yes to a flagged plan, bound to the screen they saw (seed 001, step 8): the screen is
looked at again and compared with the plan's fingerprint (the window in front, its tree and its own
pixels, less what kronii drew over it: the confirmation bubble itself); a changed screen makes the
plan stale and plans the intent again instead, an unchanged one starts the run."""

from __future__ import annotations

from kronii.foundation.audit_trail import AuditTrail
from kronii.foundation.clock import Clock
from kronii.foundation.errors import FailedPrecondition
from kronii.vision.core.commands import PlanDecision
from kronii.vision.core.fingerprint import binding_change
from kronii.vision.core.plan_book import PlanBook, PlanRecord
from kronii.vision.core.plans import PlanEvent, PlanState
from kronii.vision.usecases.build_context import ContextBuilder
from kronii.vision.usecases.make_plan import Replanner
from kronii.vision.usecases.run_plan import RunPlan

__all__ = ["ApprovePlan"]


class ApprovePlan:
    def __init__(
        self,
        book: PlanBook,
        builder: ContextBuilder,
        replanner: Replanner,
        runs: RunPlan,
        audit: AuditTrail,
        clock: Clock,
    ) -> None:
        self._book = book
        self._builder = builder
        self._replanner = replanner
        self._runs = runs
        self._audit = audit
        self._clock = clock

    async def __call__(self, decision: PlanDecision) -> PlanRecord:
        """A person's yes, bound to the screen they saw: a changed screen is planned again instead."""
        actor = decision.actor
        record = self._book.get(decision.plan_id)
        if record.state is not PlanState.AWAITING_CONFIRMATION:
            self._book.move(record, PlanEvent.APPROVE, self._clock.wall_ms())  # raises the table's sentence
        fresh = await self._builder.build(with_screenshot=False, fresh=True)
        change = binding_change(record.context, record.frame, fresh.context, fresh.frame)
        if change:
            self._book.move(record, PlanEvent.SCREEN_CHANGED, self._clock.wall_ms(), change)
            await self._audit(
                actor=actor, action="vision.plan.approval_refused", subject=record.id, outcome="stale",
                reason=change, screenshot_hash=record.context.screenshot_hash, fingerprint=record.fingerprint,
            )  # fmt: skip
            again = await self._replanner.replan(record, change)
            record.replanned_as = again.id if again is not None else ""
            then = f"; planned again as {again.id}: see `kronii vision show {again.id}`" if again else ""
            raise FailedPrecondition(f"approval refused: {change}{then}")
        self._book.move(record, PlanEvent.APPROVE, self._clock.wall_ms())
        record.approved_by = actor
        await self._audit(
            actor=actor, action="vision.plan.approved", subject=record.id, outcome="approved",
            screenshot_hash=record.context.screenshot_hash, fingerprint=record.fingerprint,
        )  # fmt: skip
        self._runs.start(record)
        return record
