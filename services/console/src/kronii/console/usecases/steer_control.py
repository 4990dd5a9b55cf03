"""What the person does on the Control page: Wait, Interrupt or Stop the agent that holds the
desktop (what `kronii control wait|interrupt|stop` asks the input broker), and Approve or Deny a
vision plan waiting for them. Each leaves the console's audit row `console.control.<action>` with the
person as actor and how it ended, refused or not; the broker and the vision engine keep their own."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import TypeVar

from kronii.console.core.control import INTENTS, DesktopState, PlanView
from kronii.console.ports import InputBroker, VisionPlans
from kronii.foundation.audit_trail import AuditTrail
from kronii.foundation.errors import InvalidArgument, KroniiError

__all__ = ["SteerControl"]

T = TypeVar("T")
_PLAN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def _plan_id(value: str) -> str:
    if not _PLAN_ID.fullmatch(value):
        raise InvalidArgument(f"{value[:40]!r} is not a plan id")
    return value


class SteerControl:
    def __init__(self, broker: InputBroker, vision: VisionPlans, audit: AuditTrail) -> None:
        self._broker = broker
        self._vision = vision
        self._audit = audit

    async def intent(self, person: str, name: str) -> DesktopState:
        """wait, interrupt or stop: STOP_NOW revokes a live lease (the agent's next key is refused)."""
        intent = INTENTS.get(name)
        if intent is None:
            raise InvalidArgument(f"the intent is one of {', '.join(INTENTS)}, not {name[:20]!r}")
        before = await self._broker.state()
        return await self._audited(
            person, name, before.session_id, self._broker.intent(intent),
            lambda s: f"{s.control_mode} {s.user_intent} {s.agent_status}",
            holder=before.holder, epoch=before.epoch,
        )  # fmt: skip

    async def approve(self, person: str, plan_id: str) -> PlanView:
        plan_id = _plan_id(plan_id)
        return await self._audited(
            person, "approve", plan_id, self._vision.approve(plan_id), lambda p: p.state
        )

    async def deny(self, person: str, plan_id: str) -> PlanView:
        plan_id = _plan_id(plan_id)
        return await self._audited(person, "deny", plan_id, self._vision.deny(plan_id), lambda p: p.state)

    async def _audited(
        self, person: str, action: str, subject: str, call: Awaitable[T], outcome: Callable[[T], str],
        **detail: object,
    ) -> T:  # fmt: skip
        try:
            answer = await call
        except KroniiError as error:
            await self._audit(
                actor=person, action=f"console.control.{action}", subject=subject,
                outcome="refused", error=str(error), **detail,
            )  # fmt: skip
            raise
        await self._audit(
            actor=person,
            action=f"console.control.{action}",
            subject=subject,
            outcome=outcome(answer),
            **detail,
        )
        return answer
