"""The sensor as a service: feeds the core from the display, lock signals and a tick; carries out
the core's effects (publish on NATS, snapshot in Redis, envelopes and audit in PostgreSQL)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

import grpc
from fastapi import APIRouter
from google.protobuf.message import Message
from kronii.activity.v1 import activity_pb2 as pb
from kronii.activity.v1 import activity_pb2_grpc as pb_grpc
from kronii.common import subjects
from kronii.common.metrics_zero import zero_common_series as start_at_zero
from kronii.common.service import DependencyStatus, ServiceContext
from kronii.sensor.adapters.events import ActivityEventStore
from kronii.sensor.adapters.lock import LockWatcher
from kronii.sensor.adapters.snapshots import SNAPSHOT_KEY, RedisSnapshotStore
from kronii.sensor.adapters.titles import TitleRedactor
from kronii.sensor.adapters.x11 import DisplayUnavailable, IdleUnavailable, X11Display
from kronii.sensor.api.convert import focus_message, state_message, timestamp, transition_message
from kronii.sensor.api.grpc_api import SensorServicer
from kronii.sensor.api.http_api import snapshot_router
from kronii.sensor.core.machine import SensorCore
from kronii.sensor.core.model import (
    ActivityState,
    Effect,
    Focus,
    FocusChanged,
    FocusObserved,
    LockEnd,
    LockRecorded,
    LockStart,
    PersistEnvelope,
    PromptChanged,
    PulseEmitted,
    SensorInput,
    StateChanged,
    Tick,
    TitleChanged,
)
from kronii.sensor.core.params import SensorParams
from kronii.sensor.core.table import TABLE, Action, Target
from kronii.sensor.ports import DisplaySource, EventStore, LockSignals, SnapshotStore
from kronii.sensor.settings import SensorSettings
from prometheus_client import Counter, Gauge, Histogram

__all__ = ["SensorApp"]

log = logging.getLogger(__name__)


# What `_publish` is called with: the suffix of kronii.activity.<kind>, and the metrics' `kind` label.
EVENT_KINDS = ("state_changed", "focus_changed", "title_changed", "activity_pulse", "lock_changed")


def possible_transitions() -> list[tuple[ActivityState, ActivityState]]:
    """Every (from, to) pair the transition table can emit as a StateChanged."""
    natural = [state for state in ActivityState if state is not ActivityState.LOCKED]
    pairs: list[tuple[ActivityState, ActivityState]] = []
    for row in TABLE:
        if Action.EMIT_STATE_CHANGED not in row.actions:
            continue
        targets = natural if row.to_state is Target.NATURAL else [row.to_state]
        for from_state in sorted(row.from_states, key=lambda state: state.value):
            pairs += [
                (from_state, to) for to in targets if to is not from_state and (from_state, to) not in pairs
            ]
    return pairs


# The audit actions the sensor appends (lock and unlock of the session).
AUDIT_ACTIONS = ("session.lock", "session.unlock")


def zero_common_series(ctx: ServiceContext) -> None:
    """The mesh-wide counters the sensor feeds start at 0 too: with no display it may publish
    nothing for hours, and its NATS and audit panels would read "no data" rather than 0."""
    publishes = [subjects.activity_topic(kind) for kind in EVENT_KINDS]
    start_at_zero(ctx.metrics, publishes=publishes, audit_actions=AUDIT_ACTIONS)


class SensorMetrics:
    def __init__(self, ctx: ServiceContext) -> None:
        registry = ctx.registry
        self.transitions = Counter(
            "kronii_sensor_transitions", "Activity state transitions", ["from", "to"], registry=registry
        )
        self.events_published = Counter(
            "kronii_sensor_events_published", "Activity events published", ["kind"], registry=registry
        )
        self.x11_errors = Counter("kronii_sensor_x11_errors", "X11 errors seen", registry=registry)
        self.state = Gauge(
            "kronii_sensor_state", "1 for the current activity state", ["state"], registry=registry
        )
        self.focus_latency = Histogram(
            "kronii_sensor_focus_latency_seconds",
            "From the display's focus event to the FocusChanged publish",
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
            registry=registry,
        )
        # Every known label value starts at 0, so a dashboard's rate shows 0 rather than no data
        # on a sensor that has not yet seen that transition or published that kind.
        for from_state, to_state in possible_transitions():
            self.transitions.labels(from_state.value, to_state.value)
        for kind in EVENT_KINDS:
            self.events_published.labels(kind)
        for item in ActivityState:
            self.state.labels(item.value).set(0)

    def set_state(self, state: ActivityState) -> None:
        for item in ActivityState:
            self.state.labels(item.value).set(1 if item is state else 0)


class SensorApp:
    def __init__(self) -> None:
        self._ctx: ServiceContext | None = None
        self._settings: SensorSettings | None = None
        self._core: SensorCore | None = None
        self._display: DisplaySource | None = None
        self._display_problem = ""
        self._locks: LockSignals = LockWatcher()
        self._inputs: asyncio.Queue[tuple[SensorInput, float]] = asyncio.Queue(maxsize=10_000)
        self._writes: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue(maxsize=10_000)
        self._tasks: list[asyncio.Task[None]] = []
        self._titles = TitleRedactor()
        self._snapshots: SnapshotStore | None = None
        self._events: EventStore | None = None
        self._metrics: SensorMetrics | None = None
        self._x11_errors_seen = 0
        self.watchers: set[asyncio.Queue[pb.ActivityEvent]] = set()

    # ---- ServiceApp --------------------------------------------------------------------------

    async def start(self, ctx: ServiceContext) -> None:
        settings = ctx.settings
        assert isinstance(settings, SensorSettings)
        self._ctx, self._settings = ctx, settings
        self._metrics = SensorMetrics(ctx)
        zero_common_series(ctx)
        if ctx.redis is None:
            raise RuntimeError("the sensor needs Redis")
        self._snapshots = RedisSnapshotStore(ctx.redis)
        if ctx.engine is not None:
            self._events = ActivityEventStore(ctx.engine)
        await ctx.bus.ensure_stream(
            subjects.ACTIVITY_STREAM, [subjects.ACTIVITY_ALL], settings.stream_max_age_secs
        )

        now = time.time()
        self._display = self._open_display(settings.display)
        idle = self._read_idle()
        params = SensorParams(
            active_grace_secs=settings.active_grace_secs,
            idle_threshold_secs=settings.idle_threshold_secs,
            title_interval_secs=settings.title_interval_secs,
        )
        self._core = SensorCore(params, now, idle_ms=idle or 0)
        self._metrics.set_state(self._core.state)
        await self._store_snapshot(now)

        loop = asyncio.get_running_loop()
        self._tasks.append(asyncio.create_task(self._consume(), name="sensor-consume"))
        self._tasks.append(asyncio.create_task(self._tick(), name="sensor-tick"))
        self._tasks.append(asyncio.create_task(self._writer(), name="sensor-writer"))
        if self._display is not None:

            def on_focus(focus_seen: Focus) -> None:
                # Called on the X11 watcher thread: hand over to the loop, stamped on arrival.
                loop.call_soon_threadsafe(
                    self._offer, FocusObserved(time.time(), focus_seen), time.perf_counter()
                )

            self._display.start(on_focus)

        def on_lock(locked: bool, source: str) -> None:
            event: SensorInput = LockStart(time.time(), source) if locked else LockEnd(time.time(), source)
            self._offer(event, time.perf_counter())

        await self._locks.start(on_lock)

    async def stop(self) -> None:
        writer = next((task for task in self._tasks if task.get_name() == "sensor-writer"), None)
        others = [task for task in self._tasks if task is not writer]
        for task in others:
            task.cancel()
        # What was already decided still reaches the database, within a short budget.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._writes.join(), 1.0)
        if writer is not None:
            writer.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        with contextlib.suppress(Exception):
            await self._locks.stop()
        if self._display is not None:
            await asyncio.to_thread(self._display.close)

    def routers(self) -> Iterable[APIRouter]:
        return [snapshot_router(self.snapshot)]

    def add_to_grpc(self, server: grpc.aio.Server) -> Iterable[str]:
        pb_grpc.add_SensorServiceServicer_to_server(SensorServicer(self), server)
        return [pb.DESCRIPTOR.services_by_name["SensorService"].full_name]

    def readiness(self) -> dict[str, DependencyStatus]:
        if self._display is None:
            display = DependencyStatus(False, self._display_problem, required=False)
        else:
            display = DependencyStatus(True, self._display.display_name, required=False)
        locks = self._locks.sources
        return {
            "display": display,
            "lock_signals": DependencyStatus(
                bool(locks), ", ".join(locks) if locks else "no session or system bus", required=False
            ),
        }

    # ---- inputs ------------------------------------------------------------------------------

    def _open_display(self, name: str | None) -> DisplaySource | None:
        if not name:
            self._display_problem = "no display: DISPLAY is not set; the sensor runs on Tick alone"
            log.warning("%s", self._display_problem)
            return None
        try:
            display = X11Display(name)
        except DisplayUnavailable as error:
            self._display_problem = f"no display: {error}; the sensor runs on Tick alone"
            log.warning("%s", self._display_problem)
            return None
        if not display.has_idle:
            log.warning(
                "the X display has no MIT-SCREEN-SAVER extension: idle time comes from focus events only"
            )
        return display

    def _read_idle(self) -> int | None:
        if self._display is None or not self._display.has_idle:
            return None
        try:
            return self._display.idle_ms()
        except (DisplayUnavailable, IdleUnavailable) as error:
            log.warning("reading idle time failed: %s", error)
            return None

    async def _idle_now(self) -> int | None:
        display = self._display
        if display is None or not display.has_idle:
            return None
        try:
            return await asyncio.to_thread(display.idle_ms)
        except IdleUnavailable:
            return None
        except DisplayUnavailable as error:
            # The X server went away: say so once, report it in /readyz, and go on with Tick alone.
            self._display_problem = f"lost the display: {error}; the sensor runs on Tick alone"
            log.warning("%s", self._display_problem)
            self._display = None
            with contextlib.suppress(Exception):
                await asyncio.to_thread(display.close)
            return None

    def _offer(self, event: SensorInput, received: float) -> None:
        try:
            self._inputs.put_nowait((event, received))
        except asyncio.QueueFull:
            log.warning("sensor input queue is full; dropping %s", type(event).__name__)

    async def _tick(self) -> None:
        assert self._settings is not None
        while True:
            await asyncio.sleep(self._settings.tick_interval_secs)
            idle = await self._idle_now()
            self._offer(Tick(time.time(), idle), time.perf_counter())

    async def _consume(self) -> None:
        assert self._core is not None and self._metrics is not None
        while True:
            event, received = await self._inputs.get()
            try:
                effects = self._core.handle(event)
                for effect in effects:
                    await self._carry_out(effect, received)
                if effects or isinstance(event, Tick):
                    await self._store_snapshot(time.time())
                self._count_x11_errors()
            except Exception:
                log.exception("handling %s failed", type(event).__name__)

    def _count_x11_errors(self) -> None:
        if self._display is None or self._metrics is None:
            return
        errors = self._display.errors
        if errors > self._x11_errors_seen:
            self._metrics.x11_errors.inc(errors - self._x11_errors_seen)
            self._x11_errors_seen = errors

    # ---- effects -----------------------------------------------------------------------------

    async def _carry_out(self, effect: Effect, received: float) -> None:
        ctx, metrics = self._ctx, self._metrics
        assert ctx is not None and metrics is not None
        match effect:
            case StateChanged():
                metrics.transitions.labels(effect.from_state.value, effect.to_state.value).inc()
                metrics.set_state(effect.to_state)
                log.info("state %s -> %s (%s)", effect.from_state.value, effect.to_state.value, effect.cause)
                message_s = pb.StateChanged(transition=transition_message(effect), cause=effect.cause)
                await self._publish("state_changed", message_s, pb.ActivityEvent(state_changed=message_s))
                self._persist(
                    "state_changed", effect.at, {"from": effect.from_state.value, "cause": effect.cause}
                )
            case FocusChanged():
                current = self._titles.clean(effect.current)
                if current.window_id:
                    log.info("focus %s changed: %s %r", effect.change, current.wm_class or "?", current.title)
                else:
                    log.info("focus changed: no window has the focus")
                message = pb.FocusChanged(
                    previous=focus_message(self._titles.clean(effect.previous)),
                    current=focus_message(current),
                    at=timestamp(effect.at),
                    change=effect.change,
                )
                await self._publish("focus_changed", message, pb.ActivityEvent(focus_changed=message))
                metrics.focus_latency.observe(time.perf_counter() - received)
                self._persist(
                    "focus_changed", effect.at, {"change": effect.change, "app": effect.current.app_name}
                )
            case TitleChanged():
                titled = self._titles.clean(effect.focus)
                log.info("title of %s: %r", titled.wm_class or "?", titled.title)
                message_t = pb.TitleChanged(focus=focus_message(titled), at=timestamp(effect.at))
                await self._publish("title_changed", message_t, pb.ActivityEvent(title_changed=message_t))
            case PromptChanged():
                shown = effect.prompt
                if shown.prompt:
                    log.info(
                        "a %s prompt has the focus (%s): not a switch to an app", shown.prompt, shown.wm_class
                    )
                else:
                    log.info("the prompt no longer has the focus")
            case PulseEmitted():
                message_p = pb.ActivityPulse(source=effect.source, at=timestamp(effect.at))
                await self._publish("activity_pulse", message_p, pb.ActivityEvent(activity_pulse=message_p))
            case LockRecorded():
                log.info("%s (%s)", "locked" if effect.locked else "unlocked", effect.source)
                message_l = pb.LockChanged(
                    locked=effect.locked, source=effect.source, at=timestamp(effect.at)
                )
                await self._publish("lock_changed", message_l, pb.ActivityEvent(lock_changed=message_l))
                self._persist("lock" if effect.locked else "unlock", effect.at, {"source": effect.source})
                self._audit(
                    actor=effect.source,
                    action="session.lock" if effect.locked else "session.unlock",
                    outcome="recorded",
                )
            case PersistEnvelope():
                self._persist(effect.kind, effect.at, {})

    async def _publish(self, kind: str, message: Message, event: pb.ActivityEvent) -> None:
        assert self._ctx is not None and self._metrics is not None
        try:
            await self._ctx.bus.publish(subjects.activity_topic(kind), message)
            self._metrics.events_published.labels(kind).inc()
        except Exception as error:
            log.warning("publishing %s failed: %s", kind, error)
        for queue in list(self.watchers):
            if queue.full():
                with contextlib.suppress(asyncio.QueueEmpty):
                    queue.get_nowait()
            queue.put_nowait(event)

    def _persist(self, kind: str, at: float, detail: dict[str, str]) -> None:
        """Queue an envelope for the writer: publishing never waits for PostgreSQL."""
        assert self._core is not None
        row = {
            "at": datetime.fromtimestamp(at, UTC),
            "kind": kind,
            "state": self._core.state.value,
            "detail": detail,
        }
        self._queue_write(("row", row))

    def _audit(self, **fields: str) -> None:
        self._queue_write(("audit", fields))

    def _queue_write(self, item: tuple[str, dict[str, Any]]) -> None:
        try:
            self._writes.put_nowait(item)
        except asyncio.QueueFull:
            log.warning("the database writer is behind; dropping a %s", item[0])

    async def _writer(self) -> None:
        """Write envelopes in batches and audit rows in order, off the event path."""
        ctx = self._ctx
        assert ctx is not None
        while True:
            batch = [await self._writes.get()]
            while not self._writes.empty() and len(batch) < 200:
                batch.append(self._writes.get_nowait())
            rows = [fields for kind, fields in batch if kind == "row"]
            try:
                if rows and self._events is not None:
                    await self._events.append(rows)
            except Exception as error:
                log.warning("persisting %d activity envelopes failed: %s", len(rows), error)
            for kind, fields in batch:
                if kind == "audit":
                    await ctx.record(**fields)
                self._writes.task_done()

    # ---- snapshot ----------------------------------------------------------------------------

    def current_snapshot(self, now: float) -> pb.Snapshot:
        core = self._core
        assert core is not None
        snapshot = pb.Snapshot(
            activity_state=state_message(core.state),
            focus=focus_message(self._titles.clean(core.focus)),
            idle_ms=core.idle_ms(now),
            locked=core.locked,
            updated_at=timestamp(now),
            display_available=self._display is not None,
            prompt=core.prompt.prompt,
        )
        if core.last_transition is not None:
            snapshot.last_transition.CopyFrom(transition_message(core.last_transition))
        return snapshot

    async def _store_snapshot(self, now: float) -> None:
        if self._snapshots is None:
            return
        try:
            await self._snapshots.put(self.current_snapshot(now))
        except Exception as error:
            log.warning("storing the snapshot in Redis failed: %s", error)

    async def snapshot(self) -> pb.Snapshot:
        """The latest snapshot as kept in Redis: HTTP and gRPC both answer from there."""
        assert self._snapshots is not None
        stored = await self._snapshots.get()
        if stored is None:
            raise LookupError(f"no snapshot in Redis under {SNAPSHOT_KEY}")
        return stored
