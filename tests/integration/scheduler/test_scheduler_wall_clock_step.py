"""Durations are measured on the monotonic clock: a step of the wall clock (+2 h and back, as NTP or
a person setting the time does) neither stretches a 60 s cooldown to 2 h nor ends it early, and the
hourly run count forgets a run after an hour of time passing, whatever the wall clock said when it
was recorded. The scheduler runs in process on the test run's real Redis, NATS and PostgreSQL, with
its clock on injected time sources (`advance` is time passing, `step_wall` moves only the wall
clock); what it shows or answers is still said on the wall clock."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest_asyncio
import redis.asyncio as aioredis
from kronii.foundation.clock import SystemClock
from kronii.scheduler.api.convert import (
    admission_message,
    admit_input,
    plan_command,
    plan_response,
    schedule_message,
)
from kronii.scheduler.app import SchedulerApp
from kronii.scheduler.settings import SchedulerSettings
from kronii.scheduler.usecases.operations import SchedulerOperations
from kronii.scheduler.v1 import scheduler_pb2 as pb

from tests.infra import InfraUrls, service_context
from tests.integration.scheduler.conftest import new_prefix

TWO_HOURS = 7200.0
APP_CEILING = 2


class SteppedTime:
    """Nanosecond time sources for SystemClock: the monotonic one moves only with `advance`."""

    def __init__(self) -> None:
        self.wall_ns = time.time_ns()
        self.monotonic_ns = 5_000 * 10**9

    def wall(self) -> int:
        return self.wall_ns

    def monotonic(self) -> int:
        return self.monotonic_ns

    def advance(self, secs: float) -> None:
        self.wall_ns += round(secs * 1e9)
        self.monotonic_ns += round(secs * 1e9)

    def step_wall(self, secs: float) -> None:
        self.wall_ns += round(secs * 1e9)


class Wire:
    """The scheduler as its surfaces see it: protobuf in, protobuf out, through its one front."""

    def __init__(self, operations: SchedulerOperations) -> None:
        self._operations = operations

    async def submit_plan(self, plan: pb.Plan) -> pb.PlanResponse:
        return plan_response(await self._operations.submit_plan(plan_command(plan)))

    async def admit(self, request: pb.AdmitRequest) -> pb.AdmitResponse:
        return admission_message(await self._operations.admit(admit_input(request)))

    async def schedule(self) -> pb.ScheduleView:
        return schedule_message(await self._operations.schedule())


@dataclass
class World:
    app: Wire
    time: SteppedTime


@pytest_asyncio.fixture
async def world(infra: InfraUrls, migrated_database: str) -> AsyncIterator[World]:
    redis = aioredis.from_url(infra.redis)
    ctx = service_context(migrated_database, redis, name="scheduler")
    ctx.settings = SchedulerSettings(
        key_prefix=new_prefix("wall-step"),
        poll_interval_secs=10,
        app_runs_per_hour=APP_CEILING,
        global_runs_per_hour=1000,
    )
    await ctx.bus.connect(infra.nats)
    stepped = SteppedTime()
    app = SchedulerApp(SystemClock(stepped.wall, stepped.monotonic))
    await app.start(ctx)
    try:
        yield World(Wire(app.operations()), stepped)
    finally:
        await app.stop()
        await ctx.bus.close()
        if ctx.engine is not None:
            await ctx.engine.dispose()
        await redis.aclose()


async def _cooldown(world: World, secs: float) -> None:
    """A plan sets a cooldown of `secs`; its answer says the end on the wall clock."""
    answer = await world.app.submit_plan(
        pb.Plan(run_id="run-1", app="editor", min_cooldown_ms=round(secs * 1000), reason="wall step")
    )
    told = answer.cooldown_until.ToNanoseconds() / 1e9
    assert abs(told - (world.time.wall_ns / 1e9 + secs)) < 1e-3


async def _admit(world: World, *, dry_run: bool = True) -> pb.AdmitResponse:
    return await world.app.admit(pb.AdmitRequest(app="editor", trigger_kind="focus_changed", dry_run=dry_run))


async def test_a_cooldown_set_while_the_clock_is_ahead_lasts_its_length_after_it_is_stepped_back(
    world: World,
) -> None:
    world.time.step_wall(TWO_HOURS)
    await _cooldown(world, 60)
    world.time.step_wall(-TWO_HOURS)
    world.time.advance(30)
    refused = await _admit(world)
    assert (refused.allowed, refused.reason) == (False, "cooldown")
    assert 29_000 <= refused.retry_after_ms <= 30_005, refused
    view = (await world.app.schedule()).cooldown
    assert view.active and 29_000 <= view.remaining_ms <= 30_005
    assert abs(view.until.ToNanoseconds() / 1e9 - (world.time.wall_ns / 1e9 + 30)) < 1e-3
    world.time.advance(31)
    assert (await _admit(world)).allowed


async def test_a_wall_clock_step_forward_does_not_end_a_cooldown_early(world: World) -> None:
    await _cooldown(world, 60)
    world.time.step_wall(TWO_HOURS)
    refused = await _admit(world)
    assert (refused.allowed, refused.reason) == (False, "cooldown")
    assert 59_000 <= refused.retry_after_ms <= 60_005, refused
    schedule = await world.app.schedule()
    assert abs(schedule.now.ToNanoseconds() / 1e9 - world.time.wall_ns / 1e9) < 1e-3
    world.time.advance(61)
    assert (await _admit(world)).allowed


async def test_the_hourly_count_forgets_a_run_after_an_hour_of_time_passing(world: World) -> None:
    world.time.step_wall(TWO_HOURS)
    for _ in range(APP_CEILING):
        assert (await _admit(world, dry_run=False)).allowed
        world.time.advance(1)
    full = await _admit(world)
    assert (full.allowed, full.reason) == (False, "app_ceiling")
    # The ceiling lifts when the first run, recorded 2 s ago, leaves the hour.
    assert 3_597_995 <= full.retry_after_ms <= 3_598_005, full
    world.time.step_wall(-TWO_HOURS)
    world.time.advance(1800)
    assert (await _admit(world)).reason == "app_ceiling", "half an hour later both runs still count"
    world.time.advance(1801)
    assert (await _admit(world)).allowed, "an hour later the runs left the window"
    counts = {counter.scope: counter.runs_last_hour for counter in (await world.app.schedule()).app_runs}
    assert counts.get("editor", 0) == 0
