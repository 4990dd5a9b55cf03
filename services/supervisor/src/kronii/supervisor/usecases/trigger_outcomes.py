"""How a trigger ends for now: its outcome stored for repeats, counted, made durable (row and audit
row, or the outbox) before it is answered, then published; a deferral goes back to the queue; and a
collision with a person's typing is announced."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from kronii.common import subjects
from kronii.supervisor.api.convert import outcome_message
from kronii.supervisor.core.job import Job
from kronii.supervisor.core.machine import Defer, Finish, TriggerMachine
from kronii.supervisor.core.model import CollisionGate, Result, RuntimeRecord
from kronii.supervisor.core.params import SupervisorParams
from kronii.supervisor.core.policy import override_audit
from kronii.supervisor.core.table import Phase
from kronii.supervisor.metrics import SupervisorMetrics
from kronii.supervisor.ports import AuditTrail, Clock, DurableRecords, EventBus, TriggerLog, TriggerState
from kronii.supervisor.v1 import supervisor_pb2 as pb

__all__ = ["Outcomes"]

log = logging.getLogger(__name__)


def _stamp(at: float | None) -> datetime | None:
    return datetime.fromtimestamp(at, UTC) if at else None


class Outcomes:
    def __init__(
        self,
        *,
        state: TriggerState,
        records: DurableRecords,
        trigger_log: TriggerLog,
        events: EventBus,
        audit: AuditTrail,
        metrics: SupervisorMetrics,
        params: SupervisorParams,
        dedupe_ttl_secs: int,
        clock: Clock,
    ) -> None:
        self._state = state
        self._records = records
        self._trigger_log = trigger_log
        self._events = events
        self._audit = audit
        self._metrics = metrics
        self._params = params
        self._dedupe_ttl_secs = dedupe_ttl_secs
        self._clock = clock

    async def finish(
        self, job: Job, machine: TriggerMachine, effect: Finish, record: RuntimeRecord | None
    ) -> pb.TriggerOutcome:
        code = effect.code.value if effect.code else ""
        outcome = self.outcome(job, machine, effect.result, effect.backend.value, code, record)
        outcome["fallback_used"] = effect.fallback_used
        if effect.result in (Result.DELIVERED, Result.TIMEOUT) and effect.backend.value:
            outcome["delivered_at"] = self._clock.time()
        await self._state.put_outcome(job.trigger_id, outcome, self._dedupe_ttl_secs)
        await self._state.done(job.trigger_id)
        await self._count(job, effect, code)
        # Durable before it is answered (or published): the row and its audit row, or the outbox.
        audit = {
            "actor": job.caller,
            "action": "supervisor.trigger",
            "subject": job.trigger_id,
            "outcome": effect.result.value,
        }
        await self._records.commit(
            self.trigger_row(job, outcome),
            {
                **audit,
                **dict(
                    request_id=job.request_id,
                    agent_id=job.agent_id,
                    workspace_id=job.workspace_id,
                    thread_id=job.thread_id,
                    runtime_id=outcome["runtime_id"],
                    reason=job.reason,
                    delivery_backend=effect.backend.value,
                    error_code=code,
                    fallback_chain=list(machine.chain),
                    **self.override(job),
                ),
            },
        )
        await self._events.publish(subjects.SUPERVISOR_OUTCOME, outcome_message(outcome))
        self._log(job, outcome)
        return outcome_message(outcome)

    async def _count(self, job: Job, effect: Finish, code: str) -> None:
        """The metrics and the guard counters (cooldown, crash loop) an outcome moves."""
        if effect.result is Result.DELIVERED:
            self._metrics.delivered.labels(effect.backend.value).inc()
            await self._state.record_success(job.workspace_id, job.agent_id)
        elif effect.result is Result.TIMEOUT:
            self._metrics.timeouts.inc()
        if effect.result is Result.TIMEOUT or (
            effect.result is Result.FAILED and code not in ("THREAD_AUTO_BLOCKED", "TRIGGER_LOOP_SUPPRESSED")
        ):
            await self._state.record_failure(
                job.workspace_id,
                job.agent_id,
                effect.result.value,
                self._clock.monotonic(),
                self._params.crash_loop_window_secs,
            )
        self._metrics.outcomes.labels(effect.result.value, code).inc()

    async def defer(
        self, job: Job, machine: TriggerMachine, effect: Defer, record: RuntimeRecord | None
    ) -> pb.TriggerOutcome:
        job.machine = machine.to_dict()
        await self._state.enqueue(job.trigger_id, job.to_dict(), effect.until)
        outcome = self.outcome(job, machine, Result.DEFERRED, "", effect.code.value, record)
        # The queue keeps the monotonic time; the outcome and its record say it on the wall clock.
        outcome["deferred_until"] = self._clock.time() + (effect.until - self._clock.monotonic())
        await self._state.put_outcome(job.trigger_id, outcome, self._dedupe_ttl_secs)
        self._metrics.outcomes.labels(Result.DEFERRED.value, effect.code.value).inc()
        self._trigger_log.attempt(
            job.trigger_id, "defer", effect.code.value, until=effect.until, **self.override(job)
        )
        await self._records.commit(self.trigger_row(job, outcome), None)
        self._log(job, outcome)
        return outcome_message(outcome)

    async def emit_collision(
        self, job: Job, machine: TriggerMachine, record: RuntimeRecord | None, busy_since: float | None
    ) -> None:
        self._metrics.collisions.inc()
        event = pb.CollisionEvent(
            trigger_id=job.trigger_id,
            runtime_id=record.runtime_id if record else "",
            agent_id=job.agent_id,
            workspace_id=job.workspace_id,
            fallback="resume" if machine.phase is Phase.RESUMING else machine.phase.value,
        )
        if busy_since is not None:
            wall_since = self._clock.time() - (self._clock.monotonic() - busy_since)
            event.busy_since.FromNanoseconds(int(wall_since * 1e9))
        event.at.FromNanoseconds(int(self._clock.time() * 1e9))
        await self._events.publish(subjects.SUPERVISOR_COLLISION, event)
        await self._audit(
            job.caller,
            "supervisor.collision",
            job.trigger_id,
            "fallback",
            runtime_id=event.runtime_id,
            busy_since=busy_since,
        )

    @staticmethod
    def override(job: Job) -> dict[str, Any]:
        return override_audit(
            requested=job.force, reason=job.reason, gate=CollisionGate(job.gate), applied=job.force
        )

    @staticmethod
    def outcome(
        job: Job,
        machine: TriggerMachine,
        result: Result,
        backend: str,
        code: str,
        record: RuntimeRecord | None,
    ) -> dict[str, Any]:
        return {
            "trigger_id": job.trigger_id,
            "result": result.value,
            "delivery_backend": backend,
            "error_code": code,
            "runtime_id": record.runtime_id if record else "",
            "fallback_chain": list(machine.chain),
            "typed_not_submitted": job.typed_not_submitted,
            "attempts": machine.deliveries,
            "agent_id": job.agent_id,
            "workspace_id": job.workspace_id,
            "thread_id": job.thread_id,
            "acked_by": job.acked_by,
            "fallback_used": "",
            "delivered_at": None,
            "deferred_until": None,
            "detail": job.detail,
        }

    def trigger_row(self, job: Job, outcome: dict[str, Any]) -> dict[str, Any]:
        return {
            "trigger_id": job.trigger_id,
            "agent_id": job.agent_id,
            "workspace_id": job.workspace_id,
            "thread_id": job.thread_id,
            "runtime_id": outcome["runtime_id"],
            "caller": job.caller,
            "reason": job.reason[:500],
            "result": outcome["result"],
            "delivery_backend": outcome["delivery_backend"],
            "error_code": outcome["error_code"],
            "fallback_chain": outcome["fallback_chain"],
            "created_at": datetime.fromtimestamp(job.created_at, UTC),
            "updated_at": _stamp(self._clock.time()),
            "delivered_at": _stamp(outcome["delivered_at"]),
            "detail": str(outcome.get("detail", ""))[:1000],
            "deferred_until": _stamp(outcome["deferred_until"]),
        }

    @staticmethod
    def _log(job: Job, outcome: dict[str, Any]) -> None:
        log.info(
            "trigger %s",
            outcome["result"],
            extra={
                "request_id": job.request_id,
                "trigger_id": job.trigger_id,
                "thread_id": job.thread_id,
                "agent_id": job.agent_id,
                "runtime_id": outcome["runtime_id"],
                "result": outcome["result"],
                "fallback_used": outcome.get("fallback_used", ""),
                "error_code": outcome["error_code"],
            },
        )
