"""How a trigger ends for now: its outcome stored for repeats, counted, made durable (row and audit
row, or the outbox) before it is answered, then published; a deferral goes back to the queue; and a
collision with a person's typing is announced."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from kronii.foundation.clock import on_the_wall
from kronii.supervisor.core.job import Job, cooldown_detail, deferral_detail, ended_detail
from kronii.supervisor.core.machine import Defer, Finish, TriggerMachine
from kronii.supervisor.core.model import CollisionGate, ErrorCode, Result, RuntimeRecord
from kronii.supervisor.core.params import SupervisorParams
from kronii.supervisor.core.policy import override_audit, runtime_failure
from kronii.supervisor.core.table import Phase
from kronii.supervisor.core.trigger import Collision, TriggerOutcome
from kronii.supervisor.metrics import SupervisorMetrics
from kronii.supervisor.ports import AuditTrail, Clock, DurableRecords, EventBus, TriggerLog, TriggerState

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
    ) -> TriggerOutcome:
        code = effect.code.value if effect.code else ""
        delivered = effect.result in (Result.DELIVERED, Result.TIMEOUT) and effect.backend.value
        job.detail = ended_detail(
            effect.result, effect.code, effect.backend, job.detail,
            acked_by=job.acked_by, attempts=machine.deliveries,
        )  # fmt: skip
        outcome = replace(
            self.outcome(job, machine, effect.result, effect.backend.value, code, record),
            fallback_used=effect.fallback_used,
            delivered_at=self._clock.wall() if delivered else None,
        )
        await self._state.put_outcome(outcome, self._dedupe_ttl_secs)
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
                    runtime_id=outcome.runtime_id,
                    reason=job.reason,
                    delivery_backend=effect.backend.value,
                    error_code=code,
                    fallback_chain=list(machine.chain),
                    **self.override(job),
                ),
            },
        )
        await self._events.publish_outcome(outcome)
        self._log(job, outcome)
        return outcome

    async def _count(self, job: Job, effect: Finish, code: str) -> None:
        """The metrics and the guard counters an outcome moves: a delivery ends the agent's failure
        streak; only a real failure of its runtime adds to it (and to the crash-loop history)."""
        if effect.result is Result.DELIVERED:
            self._metrics.delivered.labels(effect.backend.value).inc()
            await self._state.record_success(job.workspace_id, job.agent_id)
        elif effect.result is Result.TIMEOUT:
            self._metrics.timeouts.inc()
        why = runtime_failure(effect.result, effect.code)
        if why:
            await self._state.count_failure(
                job.workspace_id,
                job.agent_id,
                why,
                self._clock.monotonic(),
                self._params.crash_loop_window_secs,
            )
        self._metrics.outcomes.labels(effect.result.value, code).inc()

    async def defer(
        self, job: Job, machine: TriggerMachine, effect: Defer, record: RuntimeRecord | None
    ) -> TriggerOutcome:
        job.machine = machine.to_dict()
        job.detail = await self._deferral_detail(job, effect)
        await self._state.enqueue(job, effect.until)
        # The queue keeps the monotonic time; the outcome and its record say it on the wall clock.
        outcome = replace(
            self.outcome(job, machine, Result.DEFERRED, "", effect.code.value, record),
            deferred_until=on_the_wall(self._clock, effect.until),
        )
        await self._state.put_outcome(outcome, self._dedupe_ttl_secs)
        self._metrics.outcomes.labels(Result.DEFERRED.value, effect.code.value).inc()
        self._trigger_log.attempt(
            job.trigger_id, "defer", effect.code.value, until=effect.until, **self.override(job)
        )
        await self._records.commit(self.trigger_row(job, outcome), None)
        self._log(job, outcome)
        return outcome

    async def _deferral_detail(self, job: Job, effect: Defer) -> str:
        """A cooldown says how many triggers failed, why the last one did and how long it waits."""
        if effect.code is not ErrorCode.TRIGGER_COOLDOWN:
            return deferral_detail(effect.code, job.detail)
        failed, _last, why = await self._state.failure_streak(job.workspace_id, job.agent_id)
        return cooldown_detail(failed, why, effect.until - self._clock.monotonic())

    async def emit_collision(
        self, job: Job, machine: TriggerMachine, record: RuntimeRecord | None, busy_since: float | None
    ) -> None:
        self._metrics.collisions.inc()
        collision = Collision(
            trigger_id=job.trigger_id,
            runtime_id=record.runtime_id if record else "",
            agent_id=job.agent_id,
            workspace_id=job.workspace_id,
            fallback="resume" if machine.phase is Phase.RESUMING else machine.phase.value,
            at=self._clock.wall(),
            busy_since=None if busy_since is None else on_the_wall(self._clock, busy_since),
        )
        await self._events.publish_collision(collision)
        await self._audit(
            actor=job.caller,
            action="supervisor.collision",
            subject=job.trigger_id,
            outcome="fallback",
            runtime_id=collision.runtime_id,
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
    ) -> TriggerOutcome:
        return TriggerOutcome(
            trigger_id=job.trigger_id,
            result=result.value,
            delivery_backend=backend,
            error_code=code,
            runtime_id=record.runtime_id if record else "",
            fallback_chain=tuple(machine.chain),
            typed_not_submitted=job.typed_not_submitted,
            attempts=machine.deliveries,
            agent_id=job.agent_id,
            workspace_id=job.workspace_id,
            thread_id=job.thread_id,
            acked_by=job.acked_by,
            detail=job.detail,
        )

    def trigger_row(self, job: Job, outcome: TriggerOutcome) -> dict[str, Any]:
        """The outcome's row in supervisor_triggers, with who asked and why."""
        return {
            "trigger_id": job.trigger_id,
            "agent_id": job.agent_id,
            "workspace_id": job.workspace_id,
            "thread_id": job.thread_id,
            "runtime_id": outcome.runtime_id,
            "caller": job.caller,
            "reason": job.reason[:500],
            "result": outcome.result,
            "delivery_backend": outcome.delivery_backend,
            "error_code": outcome.error_code,
            "fallback_chain": list(outcome.fallback_chain),
            "created_at": datetime.fromtimestamp(job.created_at, UTC),
            "updated_at": _stamp(self._clock.wall()),
            "delivered_at": _stamp(outcome.delivered_at),
            "detail": outcome.detail[:1000],
            "deferred_until": _stamp(outcome.deferred_until),
        }

    @staticmethod
    def _log(job: Job, outcome: TriggerOutcome) -> None:
        log.info(
            "trigger %s",
            outcome.result,
            extra={
                "request_id": job.request_id,
                "trigger_id": job.trigger_id,
                "thread_id": job.thread_id,
                "agent_id": job.agent_id,
                "runtime_id": outcome.runtime_id,
                "result": outcome.result,
                "fallback_used": outcome.fallback_used,
                "error_code": outcome.error_code,
            },
        )
