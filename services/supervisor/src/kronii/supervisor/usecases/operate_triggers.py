"""What an operator does with a trigger after it was asked for: read its outcome, list the recent
ones (the deferred queue among them), force a deferred one past the checks that deferred it (with an
override reason), and unblock a thread the loop guard blocked."""

from __future__ import annotations

from dataclasses import replace

from kronii.foundation.errors import Conflict, InvalidArgument, NotFound, PermissionDenied
from kronii.supervisor.core.job import OVERRIDE_PREFIXES
from kronii.supervisor.core.model import Result
from kronii.supervisor.core.policy import ThreadState
from kronii.supervisor.core.tokens import Claims
from kronii.supervisor.core.trigger import LIST_LIMIT, PENDING, TriggerOutcome, TriggerQuery
from kronii.supervisor.ports import AuditTrail, TriggerHistory, TriggerLog, TriggerState
from kronii.supervisor.usecases.access import need
from kronii.supervisor.usecases.trigger_agent import TriggerAgent

__all__ = ["OperateTriggers"]


class OperateTriggers:
    def __init__(
        self,
        *,
        triggers: TriggerAgent,
        state: TriggerState,
        trigger_log: TriggerLog,
        audit: AuditTrail,
        history: TriggerHistory | None = None,
    ) -> None:
        self._triggers = triggers
        self._state = state
        self._trigger_log = trigger_log
        self._audit = audit
        self._history = history

    async def list_triggers(self, query: TriggerQuery, claims: Claims) -> list[TriggerOutcome]:
        """The recent triggers the caller may read, the most recently changed first."""
        need(claims, "read", query.workspace_id or None)
        if not 1 <= query.limit <= LIST_LIMIT:
            raise InvalidArgument(f"limit must be 1 to {LIST_LIMIT}, not {query.limit}")
        known = {result.value for result in Result}
        if query.result and query.result not in known:
            raise InvalidArgument(f"result must be one of {', '.join(sorted(known))}, not {query.result!r}")
        if self._history is None:
            return []
        workspaces = None if "*" in claims.workspaces else claims.workspaces
        return await self._history.recent(query, workspaces)

    async def get_trigger(self, trigger_id: str, claims: Claims) -> TriggerOutcome:
        stored = await self._state.get_outcome(trigger_id)
        if stored is None:
            stored = await self._trigger_log.find(trigger_id)
            if stored is None:
                raise NotFound(f"no trigger {trigger_id!r}")
        need(claims, "read", stored.workspace_id)
        if stored.result == PENDING:
            stored = replace(stored, result=Result.ALREADY_ACTIVE.value, error_code="TRIGGER_IN_FLIGHT")
        return stored

    async def force(self, trigger_id: str, reason: str, claims: Claims) -> TriggerOutcome:
        if not reason.startswith(OVERRIDE_PREFIXES):
            raise InvalidArgument(
                "force needs a reason starting with 'human_override:' or 'coordinator_override:'",
            )
        stored = await self._state.get_outcome(trigger_id)
        if stored is None:
            raise NotFound(f"no trigger {trigger_id!r}")
        need(claims, "operate", stored.workspace_id)
        if stored.result != Result.DEFERRED.value:
            raise Conflict(f"trigger {trigger_id!r} is {stored.result}, not deferred")
        job = await self._state.take(trigger_id)
        if job is None:
            raise Conflict(f"trigger {trigger_id!r} is being worked on right now")
        job = replace(job, force=True, reason=reason, caller=claims.subject)
        return await self._triggers.requeue_and_run(job)

    async def unblock(self, agent_id: str, thread_id: str, reason: str, claims: Claims) -> bool:
        """Clear the thread's guard; whether it was blocked."""
        if not claims.has("operate"):
            raise PermissionDenied("unblocking a thread needs the 'operate' scope")
        data = await self._state.thread_state(agent_id, thread_id)
        state = ThreadState.from_dict(data) if data else ThreadState()
        await self._state.put_thread_state(agent_id, thread_id, ThreadState().to_dict())
        await self._audit(
            actor=claims.subject,
            action="supervisor.unblock",
            subject=f"{agent_id}/{thread_id}",
            outcome="unblocked",
            reason=reason,
            was_blocked=state.blocked,
        )
        return state.blocked
