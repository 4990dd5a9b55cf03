"""The sensor's composition root: builds the display, the lock signals, the stores and the
publisher, the state machine and the use cases that feed it and carry out its effects, their front
(SensorOperations) and the HTTP and gRPC surfaces; starts and stops the loops. The decisions are in
core/, the use cases in usecases/.

Two clocks (kronii.foundation.clock.SystemClock): the inputs' times, the snapshot's and the envelopes'
are on the wall clock as the core has always taken them; the focus latency is on the monotonic one."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterable

import grpc
from fastapi import APIRouter
from kronii.activity.v1 import activity_pb2 as pb
from kronii.activity.v1 import activity_pb2_grpc as pb_grpc
from kronii.desktop.session import probe as probe_session
from kronii.desktop.sway_ipc import sway_socket
from kronii.foundation.clock import Clock, SystemClock
from kronii.runtime.service import DependencyStatus, ServiceContext
from kronii.sensor.adapters.activity_bus import BusActivityPublisher
from kronii.sensor.adapters.events import ActivityEventStore
from kronii.sensor.adapters.gnome import GnomeDisplay
from kronii.sensor.adapters.kwin import KdeDisplay
from kronii.sensor.adapters.lock import LockWatcher
from kronii.sensor.adapters.snapshots import RedisSnapshotStore
from kronii.sensor.adapters.spans import SpanTable
from kronii.sensor.adapters.titles import TitleRedactor
from kronii.sensor.adapters.wayland import WaylandDisplay
from kronii.sensor.adapters.x11 import X11Display
from kronii.sensor.api.grpc_api import SensorServicer
from kronii.sensor.api.http_api import activity_router, snapshot_router
from kronii.sensor.core.machine import SensorCore
from kronii.sensor.core.params import SensorParams
from kronii.sensor.core.spans import SpanTracker
from kronii.sensor.metrics import SensorMetrics, zero_common_series
from kronii.sensor.ports import LockSignals
from kronii.sensor.settings import SensorSettings
from kronii.sensor.usecases.forget_activity import ForgetActivity
from kronii.sensor.usecases.import_activity import ImportActivity
from kronii.sensor.usecases.keep_snapshot import KeepSnapshot
from kronii.sensor.usecases.keep_spans import KeepSpans
from kronii.sensor.usecases.operations import ActivityHistory, SensorOperations
from kronii.sensor.usecases.publish_activity import PublishActivity
from kronii.sensor.usecases.read_history import ReadHistory
from kronii.sensor.usecases.record_activity import RecordActivity
from kronii.sensor.usecases.take_activity import TakeActivity
from kronii.sensor.usecases.watch_activity import ActivityFeed
from kronii.sensor.usecases.watch_display import DisplayWatch
from kronii.stores import subjects

__all__ = ["SensorApp"]


class SensorApp:
    def __init__(self, clock: Clock | None = None) -> None:
        self._clock = clock if clock is not None else SystemClock()
        self._locks: LockSignals = LockWatcher()
        self._titles = TitleRedactor()
        self._feed = ActivityFeed()
        self._display: DisplayWatch | None = None
        self._record: RecordActivity | None = None
        self._spans: KeepSpans | None = None
        self._operations: SensorOperations | None = None
        self._tasks: list[asyncio.Task[None]] = []

    def operations(self) -> SensorOperations:
        """The front the surfaces call; the HTTP one is built before the start."""
        if self._operations is None:
            raise RuntimeError("the sensor has not started")
        return self._operations

    # ---- ServiceApp --------------------------------------------------------------------------

    async def start(self, ctx: ServiceContext) -> None:
        settings = ctx.settings
        assert isinstance(settings, SensorSettings)
        metrics = SensorMetrics(ctx)
        zero_common_series(ctx)
        if ctx.redis is None:
            raise RuntimeError("the sensor needs Redis")
        store = RedisSnapshotStore(ctx.redis)
        events = ActivityEventStore(ctx.engine) if ctx.engine is not None else None
        await ctx.bus.ensure_stream(
            subjects.ACTIVITY_STREAM, [subjects.ACTIVITY_ALL], settings.stream_max_age_secs
        )

        now = self._clock.wall()
        display = self._display = _open_display(settings, metrics)
        idle = display.read_idle()
        params = SensorParams(
            active_grace_secs=settings.active_grace_secs,
            idle_threshold_secs=settings.idle_threshold_secs,
            title_interval_secs=settings.title_interval_secs,
        )
        core = SensorCore(params, now, idle_ms=idle or 0)
        metrics.set_state(core.state)
        snapshot = KeepSnapshot(core, self._titles, display, store, settings.activity_flush_secs)
        await snapshot.write(now)
        record = self._record = RecordActivity(events, ctx.record)
        publish = PublishActivity(
            core, self._titles, BusActivityPublisher(ctx.bus), self._feed, record, metrics, self._clock
        )
        history = self._history(ctx, settings, record)
        take = TakeActivity(core, publish, snapshot, display, self._clock, self._spans)
        self._operations = SensorOperations(snapshot, self._feed, history)

        self._tasks.append(asyncio.create_task(take.run(), name="sensor-consume"))
        self._tasks.append(
            asyncio.create_task(take.tick_forever(settings.tick_interval_secs), name="sensor-tick")
        )
        self._tasks.append(asyncio.create_task(record.run(), name="sensor-writer"))
        if self._spans is not None:
            self._tasks.append(asyncio.create_task(self._spans.run(), name="sensor-spans"))
        if history is not None:
            self._tasks.append(asyncio.create_task(history.forget.prune_forever(), name="sensor-retention"))
        loop = asyncio.get_running_loop()
        display.watch_idle(take.idle_from_thread(loop))
        display.start(take.focus_from_thread(loop))
        await self._locks.start(take.on_lock)

    def _history(
        self, ctx: ServiceContext, settings: SensorSettings, record: RecordActivity
    ) -> ActivityHistory | None:
        """The span keeper always (it feeds the history when there is one); the history's use
        cases only with PostgreSQL."""
        table = SpanTable(ctx.engine) if ctx.engine is not None else None
        spans = self._spans = KeepSpans(
            SpanTracker(settings.activity_pulse_secs),
            table,
            self._titles,
            self._clock,
            settings.activity_flush_secs,
        )
        if table is None:
            return None
        return ActivityHistory(
            read=ReadHistory(table, spans, self._clock),
            forget=ForgetActivity(
                table, spans, record, ctx.record, self._clock, settings.activity_retention_days
            ),
            bring_in=ImportActivity(
                table, self._titles, ctx.record, self._clock, settings.activity_retention_days
            ),
        )

    async def stop(self) -> None:
        writers = ("sensor-writer", "sensor-spans")
        for task in self._tasks:
            if task.get_name() not in writers:
                task.cancel()
        if self._spans is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._spans.stop(), 1.0)
        # What was already decided still reaches the database, within a short budget.
        if self._record is not None:
            await self._record.flush(wait_secs=1.0)
        for task in self._tasks:
            if task.get_name() in writers:
                task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        with contextlib.suppress(Exception):
            await self._locks.stop()
        if self._display is not None:
            await self._display.close()

    def routers(self) -> Iterable[APIRouter]:
        return [snapshot_router(self.operations), activity_router(self.operations, self._clock.wall)]

    def add_to_grpc(self, server: grpc.aio.Server) -> Iterable[str]:
        pb_grpc.add_SensorServiceServicer_to_server(SensorServicer(self.operations), server)
        return [pb.DESCRIPTOR.services_by_name["SensorService"].full_name]

    def readiness(self) -> dict[str, DependencyStatus]:
        source = self._display.source if self._display is not None else None
        if source is None:
            problem = self._display.problem if self._display is not None else ""
            display = DependencyStatus(False, problem, required=False)
        elif source.problem:
            display = DependencyStatus(False, f"{source.display_name}: {source.problem}", required=False)
        else:
            display = DependencyStatus(True, source.display_name, required=False)
        locks = self._locks.sources
        return {
            "display": display,
            "lock_signals": DependencyStatus(
                bool(locks), ", ".join(locks) if locks else "no session or system bus", required=False
            ),
        }


def _open_display(settings: SensorSettings, metrics: SensorMetrics) -> DisplayWatch:
    """The session's display: a Wayland compositor when WAYLAND_DISPLAY answers (DISPLAY is then
    XWayland's, whose focus is not the person's), else the X display, else none and why."""
    env = dict(os.environ)
    if settings.display:
        env["DISPLAY"] = settings.display
    facts = probe_session(env)
    if facts.family == "gnome":  # mutter tells the focus only through kronii's Shell extension, on the bus
        watch = DisplayWatch(lambda _name: GnomeDisplay(facts), metrics)
        watch.open(str(facts.wayland_socket))
    elif facts.family == "kde":  # KWin tells the focus only to kronii's KWin script, over the bus
        watch = DisplayWatch(lambda _name: KdeDisplay(facts), metrics)
        watch.open(str(facts.wayland_socket))
    elif facts.kind == "wayland":
        sway = sway_socket(env)
        watch = DisplayWatch(lambda _name: WaylandDisplay(facts, sway=sway), metrics)
        watch.open(str(facts.wayland_socket))
    else:
        watch = DisplayWatch(X11Display, metrics)
        watch.open(facts.x_display if facts.kind == "x11" else None, facts.problem)
    return watch
