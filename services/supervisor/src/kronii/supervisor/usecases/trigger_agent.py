"""trigger_runtime (section 10.2): a trigger is checked, queued (leased) before anything touches a
pane, answered once per trigger_id, and advanced by trigger_lifecycle.py; a deferred one comes back
through the queue loop (or an operator's force, operate_triggers.py). At start, triggers whose
bytes were being typed are due at once."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import NoReturn

from kronii.foundation.errors import InvalidArgument, NotFound, Unavailable
from kronii.supervisor.core.job import OVERRIDE_PREFIXES, Job, require_id
from kronii.supervisor.core.model import Result
from kronii.supervisor.core.params import SupervisorParams
from kronii.supervisor.core.payload import Payload, PayloadError, clean_prompt
from kronii.supervisor.core.table import Phase
from kronii.supervisor.core.tokens import Claims
from kronii.supervisor.core.trigger import PENDING, TriggerCommand, TriggerOutcome
from kronii.supervisor.metrics import SupervisorMetrics
from kronii.supervisor.ports import AuditTrail, Clock, StoreUnavailable, TriggerState
from kronii.supervisor.usecases.access import need
from kronii.supervisor.usecases.trigger_lifecycle import Gathered, TriggerLifecycle

__all__ = ["TriggerAgent"]

log = logging.getLogger(__name__)


class TriggerAgent:
    def __init__(
        self,
        *,
        lifecycle: TriggerLifecycle,
        state: TriggerState,
        audit: AuditTrail,
        metrics: SupervisorMetrics,
        params: SupervisorParams,
        dedupe_ttl_secs: int,
        store_down: Callable[[], bool],
        clock: Clock,
    ) -> None:
        self._lifecycle = lifecycle
        self._state = state
        self._audit = audit
        self._metrics = metrics
        self._params = params
        self._dedupe_ttl_secs = dedupe_ttl_secs
        self._store_down = store_down
        self._clock = clock
        self.inflight: dict[str, asyncio.Task[TriggerOutcome]] = {}

    async def recover_written(self) -> int:
        """At start: triggers whose bytes were being typed when the supervisor stopped are due now."""
        return await self._state.release_written({Phase.DELIVERING.value, Phase.AWAITING_ACK.value})

    async def trigger(self, req: TriggerCommand, claims: Claims) -> TriggerOutcome:
        started = time.perf_counter()
        self._metrics.requests.inc()
        payload = self._check(req, claims)
        now = self._clock.monotonic()
        first = TriggerOutcome(
            trigger_id=req.trigger_id,
            result=PENDING,
            agent_id=req.agent_id,
            workspace_id=req.workspace_id,
            thread_id=req.thread_id,
        )
        job = self._job(req, claims, payload)
        record = self._lifecycle.target(job)
        if record is None:
            await self._refuse_unknown_agent(req, claims)
        # At least once: the job is in the queue (leased) before anything touches the pane.
        kind = self._lifecycle.kinds.get(record.kind)
        try:
            existing, gathered = await asyncio.gather(
                self._state.admit(first, self._dedupe_ttl_secs, job, now + self._lifecycle.lease(job)),
                self._lifecycle.gather(job, record, kind, now),
            )
        except StoreUnavailable as error:
            # Nothing was typed yet; a retry with the same trigger_id gets the one outcome.
            raise Unavailable(
                f"the supervisor's queue (Redis) did not answer: {error.why}; retry with the same trigger_id",
            ) from None
        if existing is not None:
            return _repeat(req, existing)
        outcome = await self.run(job, gathered)
        if outcome.result not in (Result.DEFERRED.value, PENDING):
            self._metrics.latency.observe((time.perf_counter() - started) * 1000)
        return outcome

    async def _refuse_unknown_agent(self, req: TriggerCommand, claims: Claims) -> NoReturn:
        """Never registered here (an offline runtime still names the agent, and its kind and session
        tell the fallback chain what to do): nothing to queue. The refusal is a control decision, so
        it is an audit row too (the caller's reason capped by the audit log)."""
        await self._audit(
            actor=claims.subject, action="supervisor.trigger", subject=req.trigger_id, outcome="not_found",
            agent_id=req.agent_id, workspace_id=req.workspace_id, reason=req.reason,
        )  # fmt: skip
        raise NotFound(
            f"no such agent: {req.agent_id} (no runtime of it is registered in workspace "
            f"{req.workspace_id!r}; `kronii agents list` shows the agents, `kronii agents spawn` starts one)"
        )

    def _job(self, req: TriggerCommand, claims: Claims, payload: Payload) -> Job:
        return Job(
            trigger_id=req.trigger_id,
            agent_id=req.agent_id,
            workspace_id=req.workspace_id,
            thread_id=req.thread_id,
            prompt=payload.text,
            literal=payload.literal,
            ack_timeout_secs=(req.ack_timeout_ms / 1000)
            if req.ack_timeout_ms
            else self._params.ack_timeout_secs,
            force=req.force_override,
            reason=req.reason,
            caller=claims.subject,
            request_id=req.request_id or uuid.uuid4().hex[:16],
            created_at=self._clock.wall(),
            runtime_id=req.runtime_id,
            progress_marker=req.progress_marker,
            finding_key=req.finding_key,
        )

    def _check(self, req: TriggerCommand, claims: Claims) -> Payload:
        """The request's ids, the caller's scope, the store and the prompt, or the reason not."""
        require_id("trigger_id", req.trigger_id)
        require_id("agent_id", req.agent_id)
        require_id("workspace_id", req.workspace_id)
        if req.thread_id:
            require_id("thread_id", req.thread_id)
        need(claims, "trigger", req.workspace_id)
        if self._store_down():
            # Nothing is typed that could not be recorded: refuse at the door while PostgreSQL is away.
            raise Unavailable("PostgreSQL is not reachable; nothing was typed, try again shortly")
        if req.force_override and not req.reason.startswith(OVERRIDE_PREFIXES):
            raise InvalidArgument(
                "force_override is for explicit operator intent: reason must start with "
                "'human_override:' or 'coordinator_override:'",
            )
        try:
            payload = clean_prompt(
                req.prompt,
                max_bytes=self._params.max_payload_bytes,
                literal_max_chars=self._params.literal_max_chars,
            )
        except PayloadError as error:
            raise InvalidArgument(f"prompt refused: {error}") from None
        if req.ack_timeout_ms and not 50 <= req.ack_timeout_ms <= 600_000:
            raise InvalidArgument("ack_timeout_ms must be between 50 and 600000")
        return payload

    async def requeue_and_run(self, job: Job) -> TriggerOutcome:
        """An operator's force: the job, taken off the queue, is leased again and advanced now."""
        await self._state.enqueue(job, self._clock.monotonic() + self._lifecycle.lease(job))
        return await self.run(job)

    async def run(self, job: Job, gathered: Gathered | None = None) -> TriggerOutcome:
        """Advance a job once, shielded so a client going away does not cut a delivery in half."""
        task = asyncio.create_task(self._lifecycle.advance(job, gathered))
        self.inflight[job.trigger_id] = task
        try:
            return await asyncio.shield(task)
        finally:
            if task.done():
                self.inflight.pop(job.trigger_id, None)
            else:
                task.add_done_callback(lambda _t: self.inflight.pop(job.trigger_id, None))

    async def queue_loop(self) -> None:
        interval = min(0.2, self._params.recheck_secs / 4)
        while True:
            try:
                await self.take_due()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("the trigger queue loop failed; retrying")
            await asyncio.sleep(interval)

    async def take_due(self) -> None:
        """Start every queued trigger that is due (a deferral's time came, a lease ran out)."""
        for job in await self._state.take_due(self._clock.monotonic(), lease=300):
            trigger_id = job.trigger_id
            if trigger_id in self.inflight:
                continue
            await self._state.enqueue(job, self._clock.monotonic() + self._lifecycle.lease(job))
            task = asyncio.create_task(self._run_queued(job))
            self.inflight[trigger_id] = task
            task.add_done_callback(self._forget(trigger_id))
        self._metrics.queue_depth.set(await self._state.queue_depth())

    def _forget(self, trigger_id: str) -> Callable[[asyncio.Task[TriggerOutcome]], None]:
        def forget(_task: asyncio.Task[TriggerOutcome]) -> None:
            self.inflight.pop(trigger_id, None)

        return forget

    async def _run_queued(self, job: Job) -> TriggerOutcome:
        try:
            return await self._lifecycle.advance(job)
        except Exception:
            log.exception("trigger %s failed in the queue worker", job.trigger_id)
            raise


def _repeat(req: TriggerCommand, existing: TriggerOutcome) -> TriggerOutcome:
    """The answer to a trigger_id seen before: in flight still, or its one outcome."""
    if existing.result == PENDING:
        return TriggerOutcome(
            trigger_id=req.trigger_id,
            result=Result.ALREADY_ACTIVE.value,
            error_code="TRIGGER_IN_FLIGHT",
            duplicate=True,
            agent_id=req.agent_id,
            workspace_id=req.workspace_id,
            thread_id=req.thread_id,
        )
    return replace(existing, duplicate=True)
