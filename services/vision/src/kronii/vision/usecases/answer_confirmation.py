"""A click on the confirmation notification: the person's answer (only the notification server's own
signals reach here), applied as an approval or a denial by "person:notification". An answer that cannot
be applied (the plan ended, the screen changed) is logged: nobody is waiting on the click."""

from __future__ import annotations

import logging

from kronii.foundation.errors import KroniiError
from kronii.vision.core.commands import ConfirmationAnswer, PlanDecision
from kronii.vision.usecases.approve_plan import ApprovePlan
from kronii.vision.usecases.deny_plan import DenyPlan

__all__ = ["NOTIFICATION_ACTOR", "AnswerConfirmation"]

log = logging.getLogger(__name__)

NOTIFICATION_ACTOR = "person:notification"


class AnswerConfirmation:
    def __init__(self, approve: ApprovePlan, deny: DenyPlan) -> None:
        self._approve = approve
        self._deny = deny

    async def __call__(self, answer: ConfirmationAnswer) -> None:
        decision = PlanDecision(answer.plan_id, NOTIFICATION_ACTOR)
        try:
            if answer.key == "approve":
                await self._approve(decision)
            elif answer.key == "deny":
                await self._deny(decision)
        except KroniiError as error:
            log.warning(
                "vision: the person's %s of plan %s was not applied: %s", answer.key, answer.plan_id, error
            )
