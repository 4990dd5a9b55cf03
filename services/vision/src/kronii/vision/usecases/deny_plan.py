"""A no to a held plan: it ends denied, and an approval after it is refused by the plan table."""

from __future__ import annotations

from kronii.foundation.audit_trail import AuditTrail
from kronii.foundation.clock import Clock
from kronii.vision.core.commands import PlanDecision
from kronii.vision.core.plan_book import PlanBook, PlanRecord
from kronii.vision.core.plans import PlanEvent

__all__ = ["DenyPlan"]


class DenyPlan:
    def __init__(self, book: PlanBook, audit: AuditTrail, clock: Clock) -> None:
        self._book = book
        self._audit = audit
        self._clock = clock

    async def __call__(self, decision: PlanDecision) -> PlanRecord:
        actor = decision.actor
        record = self._book.get(decision.plan_id)
        self._book.move(record, PlanEvent.DENY, self._clock.wall_ms(), f"denied by {actor}")
        await self._audit(
            actor=actor, action="vision.plan.denied", subject=record.id, outcome="denied",
            screenshot_hash=record.context.screenshot_hash, fingerprint=record.fingerprint,
        )  # fmt: skip
        return record
