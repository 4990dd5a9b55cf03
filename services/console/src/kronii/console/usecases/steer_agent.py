"""What the person does to an agent from the Agents page: trigger it with a prompt, pause or resume
it, force a deferred trigger. Each goes to the supervisor's API (its own checks and audit row, with the
console as the caller) and leaves the console's audit row `console.agents.<action>` with the person as
actor and how it ended, refused or not."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import TypeVar

from kronii.console.core.agents import (
    FORCE_PREFIX,
    MAX_PROMPT_CHARS,
    MAX_REASON_CHARS,
    Runtime,
    Trigger,
    TriggerAsk,
)
from kronii.console.ports import SupervisorAgents
from kronii.console.usecases.audited_call import audited_call
from kronii.foundation.audit_trail import AuditTrail
from kronii.foundation.errors import InvalidArgument

__all__ = ["SteerAgent"]

T = TypeVar("T")
# The supervisor's ids: what its registry and trigger ids are made of (and what a path may carry).
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")


def _id(value: str, what: str) -> str:
    value = value.strip()
    if not _ID.fullmatch(value):
        raise InvalidArgument(f"{what} must be 1 to 128 letters, digits or ._:@- (got {value[:40]!r})")
    return value


def _reason(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > MAX_REASON_CHARS:
        raise InvalidArgument(f"a reason is at most {MAX_REASON_CHARS} characters")
    return text


class SteerAgent:
    def __init__(self, supervisor: SupervisorAgents, audit: AuditTrail, new_id: Callable[[], str]) -> None:
        self._supervisor = supervisor
        self._audit = audit
        self._new_id = new_id

    async def trigger(self, person: str, workspace_id: str, agent_id: str, prompt: str) -> Trigger:
        """Wake the agent with the prompt; the answer is the supervisor's true outcome."""
        if not prompt.strip():
            raise InvalidArgument("type a prompt for the agent")
        if len(prompt) > MAX_PROMPT_CHARS:
            raise InvalidArgument(f"a prompt is at most {MAX_PROMPT_CHARS:,} characters")
        ask = TriggerAsk(
            trigger_id=f"console-{self._new_id()}",
            workspace_id=_id(workspace_id, "workspace"),
            agent_id=_id(agent_id, "agent"),
            prompt=prompt,
            reason="human: from the console",
        )
        return await self._audited(
            person, "trigger", f"{ask.workspace_id}/{ask.agent_id}", self._supervisor.trigger(ask),
            lambda t: t.result, trigger_id=ask.trigger_id, chars=len(prompt),
        )  # fmt: skip

    async def pause(self, person: str, runtime_id: str, reason: str = "") -> Runtime:
        return await self._paused(person, runtime_id, True, reason)

    async def resume(self, person: str, runtime_id: str, reason: str = "") -> Runtime:
        return await self._paused(person, runtime_id, False, reason)

    async def force(self, person: str, trigger_id: str, reason: str) -> Trigger:
        """Deliver a deferred trigger now: the supervisor wants a reason starting human_override:."""
        why = _reason(reason) or "forced from the console"
        if not why.startswith(FORCE_PREFIX):
            why = f"{FORCE_PREFIX} {why}"
        trigger_id = _id(trigger_id, "trigger")
        return await self._audited(
            person,
            "force",
            trigger_id,
            self._supervisor.force(trigger_id, why),
            lambda t: t.result,
            reason=why,
        )

    async def _paused(self, person: str, runtime_id: str, paused: bool, reason: str) -> Runtime:
        runtime_id = _id(runtime_id, "runtime")
        why = _reason(reason) or f"{'paused' if paused else 'resumed'} from the console"
        action = "pause" if paused else "resume"
        call = self._supervisor.set_paused(runtime_id, paused, why)
        return await self._audited(
            person, action, runtime_id, call, lambda r: "paused" if r.paused else "running", reason=why
        )

    async def _audited(
        self, person: str, action: str, subject: str, call: Awaitable[T], outcome: Callable[[T], str],
        **detail: object,
    ) -> T:  # fmt: skip
        return await audited_call(
            self._audit, person, f"console.agents.{action}", subject, call, outcome, **detail
        )
