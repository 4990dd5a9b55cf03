"""What the person does on the Control page: Wait, Interrupt or Stop the agent that holds the
desktop (what `kronii control wait|interrupt|stop` asks the input broker), let an agent use the
desktop for a few minutes or give the one that holds it more time (`kronii control grant|renew`: an
approved vision plan acts only under the person's grant), and Approve or Deny a vision plan waiting
for them. Each leaves the console's audit row `console.control.<action>` with the
person as actor and how it ended, refused or not; the broker and the vision engine keep their own."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from kronii.console.core.control import GRANT_MINUTES, INTENTS, DesktopState, PlanView
from kronii.console.ports import InputBroker, VisionPlans
from kronii.console.usecases.audited_call import audited_call
from kronii.foundation.audit_trail import AuditTrail
from kronii.foundation.errors import FailedPrecondition, InvalidArgument, KroniiError

__all__ = ["GrantingBroker", "SteerControl"]

T = TypeVar("T")
_PLAN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


_AGENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$")


class GrantingBroker(InputBroker, Protocol):
    """The input broker with the desktop user's grants (adapters/broker_api.py), as `kronii control
    grant|renew` asks them: refusals (no proof of presence) raise with the broker's sentence."""

    async def grant(self, agent: str, seconds: int) -> DesktopState: ...

    async def renew(self, agent: str, seconds: int) -> DesktopState: ...


def _plan_id(value: str) -> str:
    if not _PLAN_ID.fullmatch(value):
        raise InvalidArgument(f"{value[:40]!r} is not a plan id")
    return value


def _agent(value: str) -> str:
    if not _AGENT.fullmatch(value):
        raise InvalidArgument(f"{value[:40]!r} is not an agent's client id (vision is the vision engine's)")
    return value


def _seconds(minutes: str) -> int:
    """The lease's length from the page's choice of whole minutes."""
    try:
        number = int(minutes)
    except ValueError:
        number = 0
    if number not in GRANT_MINUTES:
        raise InvalidArgument(
            f"the desktop is granted for {GRANT_MINUTES[0]} to {GRANT_MINUTES[-1]} whole minutes, "
            f"not {minutes[:20]!r}"
        )
    return number * 60


class SteerControl:
    def __init__(self, broker: GrantingBroker, vision: VisionPlans, audit: AuditTrail) -> None:
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

    async def grant(self, person: str, agent: str, minutes: str) -> DesktopState:
        """Let AGENT use the desktop for MINUTES (whichever window has the focus when the broker grants)."""
        agent, seconds = _agent(agent), _seconds(minutes)
        return await self._audited(
            person, "grant", agent, self._broker.grant(agent, seconds),
            lambda s: f"{s.control_mode} {s.holder}", seconds=seconds,
        )  # fmt: skip

    async def renew(self, person: str, agent: str, minutes: str) -> DesktopState:
        """Give the agent that holds the desktop MINUTES more; refused when another holds it (or none),
        so a stale page never lengthens a lease the person did not mean."""
        agent, seconds = _agent(agent), _seconds(minutes)
        before = await self._broker.state()
        if not (before.agent_holds and before.holder == agent):
            held = f"{before.holder} holds it" if before.agent_holds else "no agent holds it"
            call = _refused(FailedPrecondition(f"{agent} does not hold the desktop now ({held})"))
        else:
            call = self._broker.renew(agent, seconds)
        return await self._audited(
            person, "renew", agent, call, lambda s: f"{s.control_mode} {s.holder}",
            seconds=seconds, epoch=before.epoch,
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
        return await audited_call(
            self._audit, person, f"console.control.{action}", subject, call, outcome, **detail
        )


async def _refused(error: KroniiError) -> DesktopState:
    raise error
