"""The pipeline as a service, its composition root: builds the adapters (sensor snapshot in Redis,
plugin registry, capture socket, notifications on NATS/SSE/D-Bus, scheduler admit/plan; runs,
notifications and controls in PostgreSQL), the use cases (the Runner, the notice desk, the run
loop) and PipelineOperations, which the HTTP routes and the NATS handlers (api/bus.py) call;
starts and stops them."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections.abc import Iterable
from typing import Any, cast

import grpc
from fastapi import APIRouter
from kronii.foundation.clock import SystemClock
from kronii.foundation.errors import StillStarting
from kronii.llm.endpoint_probe import EndpointProbe
from kronii.pipeline.adapters.backend_factory import make_backend
from kronii.pipeline.adapters.capture_client import CaptureClient, capture_registration, capture_socket
from kronii.pipeline.adapters.controls import SourceControls
from kronii.pipeline.adapters.notifications import NotificationStore
from kronii.pipeline.adapters.notifier import MeshNotifier
from kronii.pipeline.adapters.notify_dbus import DesktopNotifier
from kronii.pipeline.adapters.offer_answers import BusOfferAnswers
from kronii.pipeline.adapters.plugin_host import PluginHost
from kronii.pipeline.adapters.plugin_registry import RegistryPlugins
from kronii.pipeline.adapters.plugins_store import PluginStore
from kronii.pipeline.adapters.runs_store import RunStore
from kronii.pipeline.adapters.scheduler_client import NatsScheduler
from kronii.pipeline.adapters.sensor_snapshots import RedisSnapshots
from kronii.pipeline.adapters.sse import NotificationBroadcaster
from kronii.pipeline.adapters.tmux_plugin import TmuxPane, TmuxPlugin
from kronii.pipeline.api.bus import BusHandlers
from kronii.pipeline.api.clicks import DesktopClicks
from kronii.pipeline.api.controls import controls_router
from kronii.pipeline.api.notifications_stream import notifications_stream_router
from kronii.pipeline.api.plugins import plugins_router
from kronii.pipeline.api.runs import runs_router
from kronii.pipeline.api.triggers import pipeline_router
from kronii.pipeline.core.roles.values import BackendKind
from kronii.pipeline.core.round import RunnerConfig
from kronii.pipeline.metrics import PipelineMetrics, zero_common_series
from kronii.pipeline.ports import CapturePort, RunnerPorts
from kronii.pipeline.settings import PipelineSettings
from kronii.pipeline.usecases.forget_runs import ForgetRuns
from kronii.pipeline.usecases.in_process import NoCapture
from kronii.pipeline.usecases.operations import PipelineOperations, PipelineStores
from kronii.pipeline.usecases.run_loop import RunLoop
from kronii.pipeline.usecases.runner import Runner
from kronii.pipeline.usecases.show_notice import NoticeDesk
from kronii.runtime.service import DependencyStatus, ServiceContext
from nats.aio.subscription import Subscription
from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = ["PipelineApp"]


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
        self._operations: PipelineOperations | None = None
        self._scheduler: NatsScheduler | None = None
        self._capture: CaptureClient | None = None
        self._desktop: DesktopNotifier | None = None
        # The model endpoint the roles call, looked at in the background for readiness.
        self._model: EndpointProbe | None = None
        self._tmux_host: PluginHost | None = None
        self._broadcaster = NotificationBroadcaster()
        self._subscriptions: list[Subscription] = []
        self._loop: asyncio.Task[None] | None = None
        # Durations on the monotonic clock anchored at start (the triggers' times, every window and
        # deadline of the runner and the notice desk); records on the wall clock.
        self._clock = SystemClock()
        self._late_engine = _LateEngine()
        engine = cast(AsyncEngine, self._late_engine)
        self._plugin_store = PluginStore(engine)
        self._run_store = RunStore(engine)
        self._notification_store = NotificationStore(engine)
        self._controls = SourceControls(engine)
        source = self.operations
        self._routers: list[APIRouter] = [
            pipeline_router(source),
            runs_router(source),
            notifications_stream_router(source),
            controls_router(source),
            plugins_router(source),
        ]

    def operations(self) -> PipelineOperations:
        if self._operations is None:
            raise StillStarting("the pipeline is still starting; nothing was taken, try again in a moment")
        return self._operations

    # ---- ServiceApp --------------------------------------------------------------------------

    async def start(self, ctx: ServiceContext) -> None:
        settings = ctx.settings
        assert isinstance(settings, PipelineSettings)
        if ctx.engine is None or ctx.redis is None:
            raise RuntimeError(
                "the pipeline needs PostgreSQL and Redis (KRONII_DATABASE_URL, KRONII_REDIS_URL)"
            )
        metrics = PipelineMetrics(ctx.registry)
        zero_common_series(ctx.metrics)
        self._late_engine.engine = ctx.engine
        self._scheduler = NatsScheduler(ctx.bus, timeout_secs=settings.scheduler_admit_timeout_secs)
        capture_port: CapturePort = NoCapture()
        if settings.capture_enabled:
            self._capture = CaptureClient(capture_socket(settings.data_dir, settings.capture_socket_dir))
            capture_port = self._capture
            await self._plugin_store.register(
                capture_registration(settings.capture_risk_score), now=self._clock.wall()
            )
        if settings.desktop_notifications:
            self._desktop = DesktopNotifier(on_action=DesktopClicks(self.operations).on_action)
            with contextlib.suppress(Exception):
                await self._desktop.start()
        if settings.llm_backend is BackendKind.OPENAI and settings.llm_base_url:
            self._model = EndpointProbe(settings.llm_base_url)
            self._model.start()
        ports = self._runner_ports(ctx, settings, capture_port)
        runner = Runner(ports, self._clock, _runner_config(settings))
        notices = NoticeDesk(
            ports.notifier, lambda: runner.desktop_holds, ctx.record, self._clock, BusOfferAnswers(ctx.bus)
        )
        loop = RunLoop(runner, metrics)
        stores = PipelineStores(
            runs=self._run_store,
            plugins=self._plugin_store,
            notifications=self._notification_store,
            controls=self._controls,
            stream=self._broadcaster,
        )
        self._operations = PipelineOperations(
            clock=self._clock, stores=stores, runner=runner, notices=notices, metrics=metrics, wake=loop.wake,
            forget=ForgetRuns(self._run_store, ctx.record),
        )  # fmt: skip
        await self._subscribe(ctx, settings)
        self._loop = asyncio.create_task(loop.run(settings.loop_interval_ms / 1000), name="pipeline-loop")

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

    async def _subscribe(self, ctx: ServiceContext, settings: PipelineSettings) -> None:
        self._subscriptions += await BusHandlers(self.operations).subscribe(ctx.bus)
        if settings.tmux_plugin and shutil.which("tmux"):
            # Served over the plugin protocol like any out-of-process plugin; it registers itself.
            self._tmux_host = PluginHost(ctx.bus, TmuxPlugin(TmuxPane(settings.tmux_socket)))
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
