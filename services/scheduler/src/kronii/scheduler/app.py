"""The scheduler's composition root: builds the timer store, the Tick publisher, the use cases and
their front (SchedulerOperations), the HTTP and gRPC surfaces and the NATS subscriptions, and starts
and stops the timer poller. The rules are in core/, the use cases in usecases/; every bit of state is
in Redis, so a restarted scheduler carries on where the last one stopped.

Two clocks (kronii.foundation.clock.SystemClock): every time kept or compared (wake-ups, the cooldown,
filters, the run counts behind the ceilings) is on the monotonic clock anchored to the epoch at
start, so a step of the wall clock moves no duration, and the values in Redis stay comparable across
a restart; what is shown or written down (the schedule view, a plan's answer, audit rows, a Tick's
times, the last-tick gauge) is on the wall clock."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable

import grpc
from fastapi import APIRouter
from kronii.foundation.clock import Clock, SystemClock
from kronii.runtime.service import DependencyStatus, ServiceContext
from kronii.scheduler.adapters.ticks import BusTicks
from kronii.scheduler.adapters.timers import RedisTimers
from kronii.scheduler.api.bus import SchedulerBus, invalid_admission
from kronii.scheduler.api.grpc_api import SchedulerServicer
from kronii.scheduler.api.http_api import scheduler_router
from kronii.scheduler.metrics import SchedulerMetrics, zero_common_series
from kronii.scheduler.settings import SchedulerSettings
from kronii.scheduler.usecases.admit_run import AdmitRun
from kronii.scheduler.usecases.audit_later import AuditLater
from kronii.scheduler.usecases.fire_wakeups import FireDueWakeups
from kronii.scheduler.usecases.operations import SchedulerOperations
from kronii.scheduler.usecases.show_schedule import ShowSchedule
from kronii.scheduler.usecases.submit_plan import SubmitPlan
from kronii.scheduler.v1 import scheduler_pb2 as pb
from kronii.scheduler.v1 import scheduler_pb2_grpc as pb_grpc
from kronii.stores import subjects
from nats.aio.subscription import Subscription

__all__ = ["SchedulerApp"]

_QUEUE = "kronii-scheduler"


class SchedulerApp:
    def __init__(self, clock: Clock | None = None) -> None:
        self._clock = clock if clock is not None else SystemClock()
        self._operations: SchedulerOperations | None = None
        self._fire_due: FireDueWakeups | None = None
        self._audit: AuditLater | None = None
        self._subscriptions: list[Subscription] = []
        self._poller: asyncio.Task[None] | None = None

    def operations(self) -> SchedulerOperations:
        """The front the surfaces call; the HTTP one is built before the start."""
        if self._operations is None:
            raise RuntimeError("the scheduler has not started")
        return self._operations

    # ---- ServiceApp --------------------------------------------------------------------------

    async def start(self, ctx: ServiceContext) -> None:
        settings = ctx.settings
        assert isinstance(settings, SchedulerSettings)
        if ctx.redis is None:
            raise RuntimeError("the scheduler needs Redis (KRONII_REDIS_URL)")
        limits = settings.limits()
        metrics = SchedulerMetrics(ctx.registry)
        zero_common_series(ctx.metrics)
        timers = RedisTimers(ctx.redis, settings.key_prefix, lease_secs=settings.claim_lease_secs)
        audit = self._audit = AuditLater(ctx.record)
        fire_due = self._fire_due = FireDueWakeups(
            timers, BusTicks(ctx.bus), self._clock, limits, metrics, audit
        )
        operations = self._operations = SchedulerOperations(
            submit_plan=SubmitPlan(timers, ctx, self._clock, limits, metrics),
            admit=AdmitRun(timers, self._clock, limits, metrics, audit),
            schedule=ShowSchedule(timers, self._clock, limits),
            fire_due=fire_due,
        )
        bus = SchedulerBus(operations)
        self._subscriptions.append(
            await ctx.bus.subscribe(subjects.SCHEDULER_PLAN, bus.on_plan, queue=_QUEUE)
        )
        self._subscriptions.append(
            await ctx.bus.serve(
                subjects.SCHEDULER_ADMIT, bus.on_admit, queue=_QUEUE, on_undecodable=invalid_admission
            )
        )
        self._poller = asyncio.create_task(fire_due.poll(settings.poll_interval_secs), name="scheduler-poll")

    async def stop(self) -> None:
        if self._poller is not None:
            self._poller.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._poller
        for subscription in self._subscriptions:
            with contextlib.suppress(Exception):
                await subscription.unsubscribe()
        self._subscriptions.clear()
        if self._audit is not None:
            await self._audit.drain(wait_secs=1.0)

    def routers(self) -> Iterable[APIRouter]:
        return [scheduler_router(self.operations)]

    def add_to_grpc(self, server: grpc.aio.Server) -> Iterable[str]:
        pb_grpc.add_SchedulerServiceServicer_to_server(SchedulerServicer(self.operations), server)
        return [pb.DESCRIPTOR.services_by_name["SchedulerService"].full_name]

    def readiness(self) -> dict[str, DependencyStatus]:
        running = self._poller is not None and not self._poller.done()
        if not running or self._fire_due is None:
            return {"timers": DependencyStatus(False, "the timer poller is not running")}
        problem = self._fire_due.problem
        return {
            "timers": DependencyStatus(
                not problem, problem or "polling Redis for due wake-ups", required=False
            )
        }
