"""The scheduler as a service: applies plans (NATS and HTTP), answers admissions (NATS request/reply
and HTTP), and polls Redis for due wake-ups, publishing one Tick for each. The rules are in core/;
every bit of state is in Redis, so a restarted scheduler carries on where the last one stopped.

Two clocks (kronii.common.clock.SystemClock): every time kept or compared (wake-ups, the cooldown,
filters, the run counts behind the ceilings) is on the monotonic clock anchored to the epoch at
start, so a step of the wall clock moves no duration, and the values in Redis stay comparable across
a restart; what is shown or written down (the schedule view, a plan's answer, audit rows, a Tick's
times, the last-tick gauge) is on the wall clock."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Coroutine, Iterable
from typing import Any

import grpc
from fastapi import APIRouter
from kronii.common import subjects
from kronii.common.clock import Clock, SystemClock
from kronii.common.durable import StoreUnavailable
from kronii.common.service import DependencyStatus, ServiceContext
from kronii.scheduler.adapters.timers import RedisTimers
from kronii.scheduler.api.convert import (
    admission_message,
    admit_input,
    cooldown_message,
    counter,
    filter_messages,
    invalid_admission,
    plan_input,
    plan_response,
    tick_message,
    timestamp,
    wakeup_message,
)
from kronii.scheduler.api.grpc_api import SchedulerServicer
from kronii.scheduler.api.http_api import scheduler_router
from kronii.scheduler.core.model import SAFETY_NET_SLOT, InvalidRequest, Limits, WakeUp
from kronii.scheduler.core.rules import apply_plan, check_admit_input, decide_admission, safety_net_after
from kronii.scheduler.metrics import SchedulerMetrics, zero_common_series
from kronii.scheduler.ports import TimerStore
from kronii.scheduler.settings import SchedulerSettings
from kronii.scheduler.v1 import scheduler_pb2 as pb
from kronii.scheduler.v1 import scheduler_pb2_grpc as pb_grpc
from nats.aio.subscription import Subscription

__all__ = ["SchedulerApp"]

log = logging.getLogger(__name__)

_QUEUE = "kronii-scheduler"


def _new_id() -> str:
    return uuid.uuid4().hex


class SchedulerApp:
    def __init__(self, clock: Clock | None = None) -> None:
        self._clock = clock if clock is not None else SystemClock()
        self._ctx: ServiceContext | None = None
        self._settings: SchedulerSettings | None = None
        self._limits = Limits()
        self._timers: TimerStore | None = None
        self._metrics: SchedulerMetrics | None = None
        self._subscriptions: list[Subscription] = []
        self._poller: asyncio.Task[None] | None = None
        self._audits: set[asyncio.Task[None]] = set()
        self._poll_problem = ""

    # ---- ServiceApp --------------------------------------------------------------------------

    async def start(self, ctx: ServiceContext) -> None:
        settings = ctx.settings
        assert isinstance(settings, SchedulerSettings)
        if ctx.redis is None:
            raise RuntimeError("the scheduler needs Redis (KRONII_REDIS_URL)")
        self._ctx, self._settings = ctx, settings
        self._limits = settings.limits()
        self._metrics = SchedulerMetrics(ctx.registry)
        zero_common_series(ctx.metrics)
        self._timers = RedisTimers(ctx.redis, settings.key_prefix, lease_secs=settings.claim_lease_secs)
        self._subscriptions.append(
            await ctx.bus.subscribe(subjects.SCHEDULER_PLAN, self._on_plan, queue=_QUEUE)
        )
        self._subscriptions.append(
            await ctx.bus.serve(
                subjects.SCHEDULER_ADMIT,
                self._on_admit,
                queue=_QUEUE,
                on_undecodable=invalid_admission,
            )
        )
        self._poller = asyncio.create_task(self._poll(settings.poll_interval_secs), name="scheduler-poll")

    async def stop(self) -> None:
        if self._poller is not None:
            self._poller.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._poller
        for subscription in self._subscriptions:
            with contextlib.suppress(Exception):
                await subscription.unsubscribe()
        self._subscriptions.clear()
        if self._audits:
            await asyncio.wait(self._audits, timeout=1.0)

    def routers(self) -> Iterable[APIRouter]:
        return [scheduler_router(self)]

    def add_to_grpc(self, server: grpc.aio.Server) -> Iterable[str]:
        pb_grpc.add_SchedulerServiceServicer_to_server(SchedulerServicer(self), server)
        return [pb.DESCRIPTOR.services_by_name["SchedulerService"].full_name]

    def readiness(self) -> dict[str, DependencyStatus]:
        running = self._poller is not None and not self._poller.done()
        if not running:
            return {"timers": DependencyStatus(False, "the timer poller is not running")}
        return {
            "timers": DependencyStatus(
                not self._poll_problem, self._poll_problem or "polling Redis for due wake-ups", required=False
            )
        }

    # ---- plans -------------------------------------------------------------------------------

    async def submit_plan(self, plan: pb.Plan) -> pb.PlanResponse:
        """Apply a Planner's plan; raises InvalidRequest naming the field."""
        timers, metrics = self._parts()
        now = self._clock.monotonic()
        wall_offset = self._clock.wall() - now
        try:
            applied = apply_plan(plan_input(plan, wall_offset), now, self._limits, _new_id())
        except InvalidRequest:
            metrics.plans.labels("invalid").inc()
            raise
        ctx = self._ctx
        if ctx is None:
            raise RuntimeError("the scheduler has not started")
        ctx.require_postgres()
        if applied.ignored:
            await ctx.record(actor=plan.run_id or "planner", action="schedule.plan", subject=plan.app,
                             outcome="ignored", reason=applied.ignored)  # fmt: skip
            metrics.plans.labels("ignored").inc()
            log.info("plan from run %s ignored: %s", plan.run_id or "?", applied.ignored)
            return plan_response(applied, wall_offset)

        async def apply(_session: Any) -> None:
            if applied.wakeup is not None:
                await timers.put_wakeup(applied.wakeup)
            await timers.set_cooldown(applied.cooldown)
            await timers.merge_filters(applied.filters)

        # The plan takes effect inside its audit row's transaction: answered only once both stand.
        await ctx.record_durably(
            actor=plan.run_id or "planner",
            action="schedule.plan",
            subject=plan.app,
            outcome="applied",
            then=apply,
            wakeup_at=applied.wakeup.due_at + wall_offset if applied.wakeup is not None else None,
            cooldown_until=applied.cooldown.until + wall_offset if applied.cooldown is not None else None,
            filters=sorted(applied.filters),
        )
        metrics.plans.labels("applied").inc()
        wakeup_in = f"{applied.wakeup.due_at - now:.1f} s" if applied.wakeup is not None else "never"
        cooldown = f"{applied.cooldown.until - now:.1f} s" if applied.cooldown is not None else "none"
        log.info(
            "plan from run %s for %s: wake-up in %s, cooldown %s, filters %s",
            plan.run_id or "?",
            plan.app or "(global)",
            wakeup_in,
            cooldown,
            ", ".join(applied.filters) or "none",
        )
        return plan_response(applied, wall_offset)

    async def _on_plan(self, subject: str, plan: pb.Plan) -> None:
        try:
            await self.submit_plan(plan)
        except InvalidRequest as error:
            log.warning("refused a plan from run %s: %s", plan.run_id or "?", error)
        except StoreUnavailable as error:
            log.warning("could not apply a plan from run %s: %s", plan.run_id or "?", error.message)

    # ---- admission ---------------------------------------------------------------------------

    async def admit(self, message: pb.AdmitRequest) -> pb.AdmitResponse:
        """May a run start now? Raises InvalidRequest naming the field."""
        timers, metrics = self._parts()
        request = check_admit_input(admit_input(message))
        async with timers.admission_lock():
            now = self._clock.monotonic()
            view = await timers.admission_view(request.app, now)
            admission = decide_admission(request, view, now, self._limits)
            if admission.counts_run:
                await timers.record_run(request.app, now)
            if admission.ends_cooldown:
                await timers.set_cooldown(None)
        metrics.admits.labels("allowed" if admission.allowed else "refused", admission.reason).inc()
        if admission.preempted_cooldown and not request.dry_run:
            metrics.preemptions.labels(request.trigger_kind).inc()
            log.info("a high-priority %s for %s preempted the cooldown", request.trigger_kind, request.app)
            self._audit(
                actor=request.app or "pipeline",
                action="schedule.preempt",
                subject=request.trigger_kind,
                outcome="cooldown_ended",
                justification=request.justification,
            )
        return admission_message(admission)

    async def _on_admit(self, message: pb.AdmitRequest) -> pb.AdmitResponse:
        try:
            return await self.admit(message)
        except InvalidRequest as error:
            return invalid_admission(str(error))

    # ---- the schedule ------------------------------------------------------------------------

    async def schedule(self) -> pb.ScheduleView:
        timers, _ = self._parts()
        now = self._clock.monotonic()
        wall_offset = self._clock.wall() - now
        wakeups = await timers.pending()
        apps = await timers.apps_with_runs(now)
        app_runs = [
            counter(app, await timers.app_runs(app, now), self._limits.app_runs_per_hour) for app in apps
        ]
        return pb.ScheduleView(
            now=timestamp(now + wall_offset),
            wakeups=[wakeup_message(wakeup, now, wall_offset) for wakeup in wakeups],
            cooldown=cooldown_message(await timers.cooldown(now), now, wall_offset),
            filters=filter_messages(await timers.filters(now), wall_offset),
            global_runs=counter("global", await timers.global_runs(now), self._limits.global_runs_per_hour),
            app_runs=app_runs,
            global_ceiling_per_hour=self._limits.global_runs_per_hour,
            app_ceiling_per_hour=self._limits.app_runs_per_hour,
        )

    # ---- timers ------------------------------------------------------------------------------

    async def _poll(self, interval: float) -> None:
        while True:
            try:
                await self.fire_due()
                self._poll_problem = ""
            except Exception as error:
                if not self._poll_problem:
                    log.warning("polling for due wake-ups failed: %s", error)
                self._poll_problem = f"{type(error).__name__}: {error}"[:200]
                if self._metrics is not None:
                    self._metrics.poll_errors.inc()
            await asyncio.sleep(interval)

    async def fire_due(self) -> int:
        """Publish one Tick per due wake-up; returns how many fired."""
        timers, metrics = self._parts()
        assert self._ctx is not None
        now = self._clock.monotonic()
        # First start, or Redis lost its data: there is always a safety net.
        if not await timers.has_slot(SAFETY_NET_SLOT):
            await timers.put_wakeup(safety_net_after(now, self._limits, _new_id()))
        fired = 0
        for wakeup in await timers.claim_due(now):
            await self._fire(wakeup)
            fired += 1
        metrics.pending.set(await timers.count_pending())
        return fired

    async def _fire(self, wakeup: WakeUp) -> None:
        timers, metrics = self._parts()
        assert self._ctx is not None
        fired_at = self._clock.monotonic()
        wall_offset = self._clock.wall() - fired_at
        # Unconfirmed (publish failed) means the lease runs out and the wake-up fires again.
        await self._ctx.bus.publish(subjects.SCHEDULER_TICK, tick_message(wakeup, fired_at, wall_offset))
        await timers.done(wakeup)
        await timers.put_wakeup(safety_net_after(fired_at, self._limits, _new_id()))
        metrics.ticks.labels(wakeup.kind.value).inc()
        metrics.last_tick.set(fired_at + wall_offset)  # Unix wall time
        metrics.tick_lateness.observe(max(0.0, fired_at - wakeup.due_at))
        log.info(
            "tick %s (%s) for %s, %.3f s after its due time",
            wakeup.wakeup_id,
            wakeup.kind.value,
            wakeup.app or wakeup.slot,
            fired_at - wakeup.due_at,
        )
        self._audit(
            actor="scheduler",
            action="schedule.tick",
            subject=wakeup.app or wakeup.slot,
            outcome=wakeup.kind.value,
            wakeup_id=wakeup.wakeup_id,
            run_id=wakeup.run_id,
        )

    # ---- helpers -----------------------------------------------------------------------------

    def _parts(self) -> tuple[TimerStore, SchedulerMetrics]:
        if self._timers is None or self._metrics is None:
            raise RuntimeError("the scheduler has not started")
        return self._timers, self._metrics

    def _audit(self, **fields: Any) -> None:
        """Audit rows are written off the request path: an admission never waits for PostgreSQL."""
        if self._ctx is None:
            return
        record: Coroutine[Any, Any, None] = self._ctx.record(**fields)
        task = asyncio.create_task(record)
        self._audits.add(task)
        task.add_done_callback(self._audits.discard)
