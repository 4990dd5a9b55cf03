"""The service runtime: every kronii service is one process built the same way.

A service supplies a `ServiceSpec` (name, settings class, dependencies) and a `ServiceApp`
(start/stop, HTTP routers, gRPC servicers, extra readiness detail). The runtime gives it
settings, logging, tracing, metrics, the bus, Redis, PostgreSQL and the audit log, serves
`/healthz`, `/readyz` and `/metrics` over HTTP and the standard health and reflection services
over gRPC, and stops cleanly on SIGTERM within the configured timeout.

This module is the run from start to stop; the pieces it puts together are in `http_app` (the HTTP
app), `grpc_server` (the gRPC server), `connections` (the dependencies, retried) and `postgres_watch`
(outages of PostgreSQL, and the audit outbox).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Generator, Iterable
from typing import Protocol

import grpc
import uvicorn
from fastapi import APIRouter, FastAPI
from kronii.edge.access import AccessPolicy, AccessRules
from kronii.edge.limits import DEFAULT_BODY_LIMIT
from kronii.foundation.freed_memory import keep_returning_freed_memory, return_freed_memory
from kronii.foundation.logs import configure_logging
from kronii.foundation.settings import ServiceSettings, SettingsError
from kronii.foundation.telemetry import CommonMetrics, configure_tracing
from kronii.runtime.connections import (
    close_dependencies,
    connect_dependencies,
    probe_dependencies,
    wait_for_schema,
)
from kronii.runtime.context import ServiceContext
from kronii.runtime.grpc_server import GrpcServer
from kronii.runtime.http_app import build_http_app
from kronii.runtime.postgres_watch import PostgresWatch
from kronii.runtime.readiness import ReadinessGate
from kronii.runtime.spec import DependencyStatus, ServiceSpec
from kronii.stores.bus import Bus, JetStreamUnavailable
from kronii.stores.db import EngineShare
from prometheus_client import CollectorRegistry

__all__ = ["DependencyStatus", "ServiceApp", "ServiceContext", "ServiceSpec", "run_service"]

log = logging.getLogger(__name__)


class ServiceApp(Protocol):
    async def start(self, ctx: ServiceContext) -> None: ...

    async def stop(self) -> None: ...

    def routers(self) -> Iterable[APIRouter]: ...

    def add_to_grpc(self, server: grpc.aio.Server) -> Iterable[str]:
        """Register servicers; return their full service names (for health and reflection)."""
        ...

    def readiness(self) -> dict[str, DependencyStatus]: ...


class _Server(uvicorn.Server):
    # The runtime owns SIGTERM/SIGINT; uvicorn must not install its own handlers.
    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield

    async def main_loop(self) -> None:
        """uvicorn wakes ten times a second to refresh its Date header (once a second) and look
        whether it should stop: about 5 CPU s an hour of an idle service. Once a second does the
        same; a stop wakes it at once (`exit_now`)."""
        self._wake = asyncio.Event()
        while not await self.on_tick(0):  # tick 0: the Date header is refreshed on each
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), 1.0)

    def exit_now(self) -> None:
        self.should_exit = True
        wake: asyncio.Event | None = getattr(self, "_wake", None)
        if wake is not None:
            wake.set()


class _Runtime:
    """One service's run: its context and app, the HTTP and gRPC servers (http_app, grpc_server), its
    dependencies (connections) and the PostgreSQL watch, from start to stop."""

    def __init__(
        self, spec: ServiceSpec, settings: ServiceSettings, *, engines: EngineShare | None = None
    ) -> None:
        self.spec = spec
        self.settings = settings
        # The services of one process share its PostgreSQL pool (service_group passes its share).
        self.engines = engines or EngineShare()
        self.registry = CollectorRegistry()
        self.metrics = CommonMetrics(spec.name, self.registry)
        self.ctx = ServiceContext(spec, settings, self.metrics, self.registry, Bus(spec.name, self.metrics))
        self.app: ServiceApp = spec.app_factory()()
        self.app_started = False
        self.stopping = asyncio.Event()
        # Refuses every route before the start, and work while a required dependency is not ready.
        self.gate = ReadinessGate(
            spec.name,
            self.dependency_status,
            started=lambda: self.app_started,
            stopping=self.stopping.is_set,
        )
        self.access = AccessPolicy(
            api_token=settings.api_token, rules=getattr(self.app, "access_rules", AccessRules())
        )
        self.grpc = GrpcServer(self.access, self.gate)
        self.postgres_watch = PostgresWatch(self.ctx, self.stopping)

    async def dependency_status(self) -> dict[str, DependencyStatus]:
        status = await probe_dependencies(self.ctx)
        status["service"] = DependencyStatus(self.app_started, "started" if self.app_started else "starting")
        if self.app_started:
            status.update(self.app.readiness())
        for name, item in status.items():
            self.metrics.set_dependency(name, item.ready, item.required)
        self.gate.note(status)
        return status

    def http_app(self) -> FastAPI:
        return build_http_app(
            self.ctx,
            gate=self.gate,
            access=self.access,
            dependency_status=self.dependency_status,
            routers=self.app.routers(),
            # A service may add its own edge (the console: sessions, CSRF, Host and Origin) and limit.
            edge=getattr(self.app, "http_edge", ()),
            max_body=getattr(self.app, "http_max_body", DEFAULT_BODY_LIMIT),
        )

    async def start_grpc(self) -> None:
        if self.settings.grpc_port:
            await self.grpc.start(self.app.add_to_grpc, f"{self.settings.host}:{self.settings.grpc_port}")

    # ---- lifecycle ---------------------------------------------------------------------------

    async def run(self, *, handle_signals: bool = True) -> None:
        """Serve until `stopping` is set. `handle_signals=False` where a group of services in one process
        owns SIGTERM and SIGINT (kronii.runtime.service_group) and sets `stopping` itself."""
        if handle_signals:
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, self.stopping.set)
        config = uvicorn.Config(
            self.http_app(),
            host=self.settings.host,
            port=self.settings.http_port,
            log_config=None,
            access_log=False,
            lifespan="off",
        )
        http = _Server(config)
        http_task = asyncio.create_task(http.serve(), name="http")
        try:
            await connect_dependencies(self.ctx, self.engines, self.stopping)
            await wait_for_schema(self.stopping)
            if self.stopping.is_set():
                return
            await self.app.start(self.ctx)
            self.app_started = True
            await self.start_grpc()
            await self.grpc.set_serving(True)
            # What the imports and the start left free goes back now; keep_returning_freed_memory
            # does it again every minute.
            await asyncio.to_thread(return_freed_memory)
            # Under `kronii up` the launcher prints the ready line: once is enough.
            log.log(
                logging.DEBUG if os.environ.get("KRONII_LAUNCHED_BY_UP") else logging.INFO,
                "%s ready: http %s:%s grpc %s",
                self.spec.name,
                self.settings.host,
                self.settings.http_port,
                self.settings.grpc_port or "-",
            )
            watch = asyncio.create_task(self.postgres_watch.run(), name="postgres-watch")
            stop_wait = asyncio.create_task(self.stopping.wait())
            done, _ = await asyncio.wait({stop_wait, http_task}, return_when=asyncio.FIRST_COMPLETED)
            if http_task in done and not self.stopping.is_set():
                raise RuntimeError("the HTTP server stopped unexpectedly (is the port in use?)")
            stop_wait.cancel()
            watch.cancel()
        finally:
            await self.shutdown(http, http_task)

    async def shutdown(self, http: _Server, http_task: asyncio.Task[None]) -> None:
        log.info("%s stopping", self.spec.name)
        with contextlib.suppress(Exception):
            await self.grpc.set_serving(False)
        await self.grpc.stop(grace=0.5)
        if self.app_started:
            try:
                await asyncio.wait_for(self.app.stop(), 2.0)
            except Exception:
                log.exception("stopping %s failed", self.spec.name)
        http.exit_now()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(http_task, 1.5)
        await close_dependencies(self.ctx, self.engines)
        log.info("%s stopped", self.spec.name)


def failure_reason(error: BaseException) -> str:
    """The first line of the error's own message, for the one-line summary above its traceback."""
    lines = str(error).strip().splitlines()
    return lines[0] if lines else f"unexpected {type(error).__name__}"


def run_service(spec: ServiceSpec, settings: ServiceSettings) -> None:
    """Run one service until SIGTERM; `kronii.runtime.launch.launch` checks the settings first."""
    configure_logging(spec.name, settings.log_level, settings.log_format)
    configure_tracing(spec.name)
    runtime = _Runtime(spec, settings)

    async def supervise() -> None:
        task = asyncio.create_task(runtime.run())
        stop = asyncio.create_task(runtime.stopping.wait())
        trims = asyncio.create_task(keep_returning_freed_memory(runtime.stopping), name="freed-memory")
        done, _ = await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
        trims.cancel()
        if task in done:
            stop.cancel()
            task.result()
            return
        try:
            await asyncio.wait_for(task, settings.shutdown_timeout_secs)
        except TimeoutError:
            log.error("%s did not stop within %.1f s; exiting", spec.name, settings.shutdown_timeout_secs)
            logging.shutdown()
            os._exit(1)

    try:
        asyncio.run(supervise())
    except SettingsError as error:
        log.error("%s", error.message)
        raise SystemExit(2) from None
    except JetStreamUnavailable as error:
        # A setting to change, like a SettingsError: the sentence says it all, a traceback would not help.
        log.error("%s failed: %s", spec.name, error)
        raise SystemExit(2) from None
    except Exception as error:
        log.exception("%s failed: %s", spec.name, failure_reason(error))
        raise SystemExit(1) from None
