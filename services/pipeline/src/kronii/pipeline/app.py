"""The pipeline as a service: triggers from NATS (sensor activity, plugin events, scheduler Ticks,
kronii.pipeline.trigger) and POST /v1/triggers go to the Runner; the run loop task advances it;
the ports are the mesh (sensor snapshot in Redis, plugin registry, capture socket, notifications
on NATS/SSE/D-Bus, scheduler admit/plan); runs, notifications and controls are in PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import time
from collections.abc import Iterable
from typing import Any, cast

import grpc
from fastapi import APIRouter
from google.protobuf.message import Message
from kronii.broker.v1 import broker_pb2 as bpb
from kronii.common import subjects
from kronii.common.bus import Bus
from kronii.common.desktop_hold import DesktopHold
from kronii.common.errors import StillStarting
from kronii.common.llm.endpoint_probe import EndpointProbe
from kronii.common.service import DependencyStatus, ServiceContext
from kronii.pipeline.adapters.capture_client import CaptureClient, capture_registration, capture_socket
from kronii.pipeline.adapters.controls import SourceControls
from kronii.pipeline.adapters.notifications import NotificationStore
from kronii.pipeline.adapters.notifier import MeshNotifier
from kronii.pipeline.adapters.notify_dbus import DesktopNotifier
from kronii.pipeline.adapters.plugin_host import PluginHost, serve_registrations
from kronii.pipeline.adapters.plugin_registry import RegistryPlugins
from kronii.pipeline.adapters.plugins_store import PluginStore
from kronii.pipeline.adapters.runs_store import RunRecord, RunStore
from kronii.pipeline.adapters.scheduler_client import NatsScheduler
from kronii.pipeline.adapters.sensor_snapshots import RedisSnapshots
from kronii.pipeline.adapters.sse import NotificationBroadcaster
from kronii.pipeline.adapters.tmux_plugin import TmuxPane, TmuxPlugin
from kronii.pipeline.api.controls import controls_router
from kronii.pipeline.api.convert import notice_from_message, trigger_from_message
from kronii.pipeline.api.notifications_stream import notifications_stream_router
from kronii.pipeline.api.plugins import plugins_router
from kronii.pipeline.api.runs import runs_router
from kronii.pipeline.api.triggers import pipeline_router
from kronii.pipeline.core.states import Trigger
from kronii.pipeline.metrics import PipelineMetrics, notice_source, zero_common_series
from kronii.pipeline.notice_desk import NoticeDesk
from kronii.pipeline.ports import CapturePort, NoCapture, RunnerPorts, SystemClock
from kronii.pipeline.roles.backend_factory import make_backend
from kronii.pipeline.roles.values import BackendKind
from kronii.pipeline.round_state import RunnerConfig
from kronii.pipeline.runner import Runner
from kronii.pipeline.settings import PipelineSettings
from kronii.pipeline.v1 import pipeline_pb2 as pb
from nats.aio.subscription import Subscription
from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = ["PipelineApp"]

log = logging.getLogger(__name__)


def _runner_config(settings: PipelineSettings) -> RunnerConfig:
    return RunnerConfig(
        coalesce_window_ms=settings.coalesce_window_ms,
        title_max_changes=settings.title_max_changes,
        run_limits=settings.run_limits(),
        capture_limits=settings.capture_limits(),
        context_budget_tokens=settings.context_budget_tokens,
        max_cooldown_ms=round(settings.max_cooldown_secs * 1000),
        defer_backoff_ms=round(settings.defer_backoff_secs * 1000),
        capture_ttl_ms=settings.capture_ttl_ms,
        # The backend bounds a role's call (both R2 attempts) by the timeout; this is the backstop.
        role_timeout_ms=round(settings.llm_timeout_secs * 1000) + 5_000,
    )


class _LateEngine:
    """The runtime asks for the HTTP routers before `start` connects PostgreSQL: the stores behind
    the routers get this stand-in, which hands out the real engine's connections once there is one."""

    def __init__(self) -> None:
        self.engine: AsyncEngine | None = None

    def _engine(self) -> AsyncEngine:
        if self.engine is None:
            raise RuntimeError("the pipeline has not connected to PostgreSQL yet")
        return self.engine

    def connect(self) -> Any:
        return self._engine().connect()

    def begin(self) -> Any:
        return self._engine().begin()


class PipelineApp:
    def __init__(self) -> None:
        self._ctx: ServiceContext | None = None
        self._settings: PipelineSettings | None = None
        self._runner: Runner | None = None
        self._notices: NoticeDesk | None = None
        self._metrics: PipelineMetrics | None = None
        self._scheduler: NatsScheduler | None = None
        self._capture: CaptureClient | None = None
        self._desktop: DesktopNotifier | None = None
        # The model endpoint the roles call, looked at in the background for readiness.
        self._model: EndpointProbe | None = None
        self._tmux_host: PluginHost | None = None
        self._broadcaster = NotificationBroadcaster()
        self._subscriptions: list[Subscription] = []
        self._loop: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        # Durations on the monotonic clock anchored at start (the triggers' times, every window and
        # deadline of the runner and the notice desk); records on the wall clock (ports.Clock).
        self._clock = SystemClock()
        self._late_engine = _LateEngine()
        engine = cast(AsyncEngine, self._late_engine)
        self._plugin_store = PluginStore(engine)
        self._run_store = RunStore(engine)
        self._notification_store = NotificationStore(engine)
        self._controls = SourceControls(engine)
        self._routers: list[APIRouter] = [
            pipeline_router(self.submit, self.status, self._clock),
            runs_router(self._run_store),
            notifications_stream_router(self._broadcaster),
            controls_router(self._notification_store, self._controls),
            plugins_router(self._plugin_store),
        ]

    # ---- ServiceApp --------------------------------------------------------------------------

    async def start(self, ctx: ServiceContext) -> None:
        settings = ctx.settings
        assert isinstance(settings, PipelineSettings)
        if ctx.engine is None or ctx.redis is None:
            raise RuntimeError(
                "the pipeline needs PostgreSQL and Redis (KRONII_DATABASE_URL, KRONII_REDIS_URL)"
            )
        self._ctx, self._settings = ctx, settings
        self._metrics = PipelineMetrics(ctx.registry)
        zero_common_series(ctx.metrics)
        self._late_engine.engine = ctx.engine
        self._scheduler = NatsScheduler(ctx.bus, timeout_secs=settings.scheduler_admit_timeout_secs)
        capture_port: Any = NoCapture()
        if settings.capture_enabled:
            self._capture = CaptureClient(capture_socket(settings.data_dir, settings.capture_socket_dir))
            capture_port = self._capture
            await self._plugin_store.register(
                capture_registration(settings.capture_risk_score), now=time.time()
            )
        if settings.desktop_notifications:
            self._desktop = DesktopNotifier()
            with contextlib.suppress(Exception):
                await self._desktop.start()
        if settings.llm_backend is BackendKind.OPENAI and settings.llm_base_url:
            self._model = EndpointProbe(settings.llm_base_url)
            self._model.start()
        ports = self._runner_ports(ctx, settings, capture_port)
        clock = self._clock
        runner = self._runner = Runner(ports, clock, _runner_config(settings), wall=clock.wall)
        self._notices = NoticeDesk(
            ports.notifier, lambda: runner.desktop_holds, ctx.record, clock, clock.wall
        )
        await self._subscribe(ctx.bus, settings)
        self._loop = asyncio.create_task(
            self._run_loop(settings.loop_interval_ms / 1000), name="pipeline-loop"
        )

    def _runner_ports(
        self, ctx: ServiceContext, settings: PipelineSettings, capture_port: CapturePort
    ) -> RunnerPorts:
        assert ctx.redis is not None and self._scheduler is not None
        notifier = MeshNotifier(
            channel=settings.notify_channel,
            store=self._notification_store,
            controls=self._controls,
            bus=ctx.bus,
            stream=self._broadcaster,
            desktop=self._desktop,
        )
        capture = self._capture
        return RunnerPorts(
            snapshots=RedisSnapshots(ctx.redis, self._clock),
            plugins=RegistryPlugins(
                self._plugin_store,
                ctx.bus,
                capture_available=(lambda: capture.available) if capture is not None else (lambda: False),
                timeout_secs=settings.plugin_timeout_secs,
            ),
            backend=make_backend(settings),
            notifier=notifier,
            scheduler=self._scheduler,
            runs=self._run_store,
            capture=capture_port,
            audit=ctx.record,
        )

    async def _subscribe(self, bus: Bus, settings: PipelineSettings) -> None:
        plugin_store = self._plugin_store

        async def register(registration: pb.PluginRegistration) -> None:
            await plugin_store.register(registration, now=time.time())

        self._subscriptions += [
            await bus.subscribe_any(subjects.ACTIVITY_ALL, self._on_message),
            await bus.subscribe(subjects.PLUGIN_EVENT, self._on_message),
            await bus.subscribe(subjects.SCHEDULER_TICK, self._on_message),
            await bus.subscribe(subjects.PIPELINE_TRIGGER, self._on_message),
            await bus.subscribe(subjects.PIPELINE_NOTICE, self._on_notice),
            await bus.subscribe(subjects.BROKER_CONTROL, self._on_control),
            await serve_registrations(bus, register),
        ]
        if settings.tmux_plugin and shutil.which("tmux"):
            # Served over the plugin protocol like any out-of-process plugin; it registers itself.
            self._tmux_host = PluginHost(bus, TmuxPlugin(TmuxPane(settings.tmux_socket)))
            await self._tmux_host.start()

    async def stop(self) -> None:
        if self._tmux_host is not None:
            with contextlib.suppress(Exception):
                await self._tmux_host.stop()
        for subscription in self._subscriptions:
            with contextlib.suppress(Exception):
                await subscription.unsubscribe()
        self._subscriptions.clear()
        if self._loop is not None:
            self._loop.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._loop
        self._broadcaster.close()
        if self._capture is not None:
            await self._capture.close()
        if self._desktop is not None:
            with contextlib.suppress(Exception):
                await self._desktop.stop()
        if self._model is not None:
            await self._model.stop()

    def routers(self) -> Iterable[APIRouter]:
        return self._routers

    def add_to_grpc(self, server: grpc.aio.Server) -> Iterable[str]:
        return []  # gRPC serves health only

    def readiness(self) -> dict[str, DependencyStatus]:
        running = self._loop is not None and not self._loop.done()
        status = {"run_loop": DependencyStatus(running, "running" if running else "the run loop stopped")}
        if self._scheduler is not None:
            answered = self._scheduler.available
            status["scheduler"] = DependencyStatus(
                answered is not False, self._scheduler.detail, required=False
            )
        if self._capture is not None:
            up = self._capture.available
            status["capture"] = DependencyStatus(
                up,
                "capture socket present" if up else "no capture service: rounds go on without screenshots",
                required=False,
            )
        if self._desktop is not None:
            status["desktop"] = DependencyStatus(
                self._desktop.available,
                "notifications reach the desktop"
                if self._desktop.available
                else "no session bus: NATS and SSE only",
                required=False,
            )
        if self._model is not None:
            status["model"] = self._model.status()
        return status

    def status(self) -> dict[str, Any]:
        if self._runner is None:
            return {"state": "starting"}
        return self._runner.status()

    # ---- triggers ----------------------------------------------------------------------------

    async def submit(self, trigger: Trigger) -> str:
        if self._runner is None or self._metrics is None:
            raise StillStarting("the pipeline is still starting; nothing was taken, try again in a moment")
        outcome = await self._runner.submit(trigger)
        self._metrics.triggers.labels(trigger.kind.value, outcome).inc()
        self._wake.set()
        return outcome

    async def _on_message(self, subject: str, message: Message) -> None:
        trigger = trigger_from_message(message, self._clock())
        if trigger is None:
            return
        try:
            await self.submit(trigger)
        except ValueError as error:
            log.warning("dropped a trigger from %s: %s", subject, error)

    async def _on_notice(self, _subject: str, message: pb.Notice) -> None:
        if self._notices is None or self._metrics is None:
            return
        try:
            notice = notice_from_message(message, self._clock())
        except ValueError as error:
            self._metrics.notices.labels(notice_source(message.source), "invalid").inc()
            log.warning("dropped a notice from %r: %s", message.source[:64], error)
            return
        verdict = await self._notices.receive(notice)
        self._metrics.notices.labels(notice_source(notice.source), verdict.outcome.value).inc()

    async def _on_control(self, _subject: str, message: bpb.ControlChanged) -> None:
        if self._runner is not None:
            self._runner.desktop_changed(DesktopHold.from_message(message))

    # ---- the loop ----------------------------------------------------------------------------

    async def _run_loop(self, interval: float) -> None:
        assert self._runner is not None
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), interval)
            self._wake.clear()
            try:
                for record in await self._runner.advance():
                    self._count(record)
            except Exception:
                log.exception("the run loop failed; going on")

    def _count(self, record: RunRecord) -> None:
        assert self._metrics is not None
        kind, _, detail = record.decision.partition(":")
        self._metrics.runs.labels(kind or "none").inc()
        if kind == "deferred":
            self._metrics.deferrals.labels(detail or "unknown").inc()
        if record.finished_at is not None:
            self._metrics.run_seconds.observe(max(0.0, record.finished_at - record.created_at))
        for call in record.model_calls:
            self._metrics.model_calls.labels(call.role, call.outcome).inc()
            if call.fallback:
                self._metrics.model_fallbacks.labels(call.role, call.fallback.split(":", 1)[0]).inc()
            self._metrics.tokens.labels("in").inc(call.input_tokens)
            self._metrics.tokens.labels("out").inc(call.output_tokens)
