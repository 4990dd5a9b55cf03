"""The service runtime: every kronii service is one process built the same way.

A service supplies a `ServiceSpec` (name, settings class, dependencies) and a `ServiceApp`
(start/stop, HTTP routers, gRPC servicers, extra readiness detail). The runtime gives it
settings, logging, tracing, metrics, the bus, Redis, PostgreSQL and the audit log, serves
`/healthz`, `/readyz` and `/metrics` over HTTP and the standard health and reflection services
over gRPC, and stops cleanly on SIGTERM within the configured timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import signal
import time
from collections.abc import Awaitable, Callable, Generator, Iterable
from datetime import UTC, datetime
from typing import Any, Protocol

import grpc
import redis.asyncio as aioredis
import redis.exceptions
import uvicorn
from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.responses import JSONResponse
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from kronii.edge.access import (
    OPEN_HTTP_PATHS,
    AccessInterceptor,
    AccessMiddleware,
    AccessPolicy,
    AccessRules,
)
from kronii.edge.api_edge import KroniiErrorInterceptor, RefusalMiddleware, install_error_handler
from kronii.edge.grpc_guard import GuardInterceptor
from kronii.edge.limits import install_limits
from kronii.edge.openapi import install_openapi
from kronii.foundation.freed_memory import keep_returning_freed_memory, return_freed_memory
from kronii.foundation.logs import configure_logging
from kronii.foundation.settings import ServiceSettings, SettingsError
from kronii.foundation.telemetry import CommonMetrics, configure_tracing
from kronii.runtime.context import ServiceContext
from kronii.runtime.readiness import GateInterceptor, GateMiddleware, ReadinessGate
from kronii.runtime.spec import DependencyStatus, ServiceSpec
from kronii.stores.audit import AuditLog
from kronii.stores.bus import Bus, JetStreamUnavailable
from kronii.stores.db import EngineShare, make_sessionmaker
from kronii.stores.durable import (
    AuditOutbox,
    install_unavailable_handlers,
)
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from sqlalchemy import text
from tenacity import AsyncRetrying, RetryCallState, wait_exponential

__all__ = ["DependencyStatus", "ServiceApp", "ServiceContext", "ServiceSpec", "run_service"]

log = logging.getLogger(__name__)


def _pause_unless(stopping: asyncio.Event) -> Callable[[float], Awaitable[None]]:
    """A pause between tries that a stop cuts short."""

    async def pause(secs: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stopping.wait(), secs)

    return pause


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


class _Runtime:
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
        self.health = health.aio.HealthServicer()
        self.grpc_server: grpc.aio.Server | None = None
        self.grpc_names: list[str] = []
        self.grpc_bound_port = 0
        self._outage_logged = False
        # PostgreSQL's start time and when it last answered: a restart shorter than one probe
        # interval is still an outage, and is recorded as one.
        self._postgres_started: float | None = None
        self._postgres_last_ok: float | None = None
        self.access = AccessPolicy(
            api_token=settings.api_token, rules=getattr(self.app, "access_rules", AccessRules())
        )

    # ---- dependencies ------------------------------------------------------------------------

    async def wait_for_schema(self) -> None:
        """Under `kronii up`, wait until the launcher's migrations are done (it touches the file), so
        that a service's start never queries a table that does not exist yet."""
        marker = os.environ.get("KRONII_SCHEMA_READY_FILE")
        if not marker:
            return
        while not await asyncio.to_thread(os.path.exists, marker):
            try:
                await asyncio.wait_for(self.stopping.wait(), 0.1)
            except TimeoutError:
                continue
            return  # stopping before the schema was ready

    async def connect(self) -> None:
        """Connect every dependency, retrying until it answers or the service is told to stop."""
        s = self.settings
        if "postgres" in self.spec.needs and s.database_url:
            self.ctx.engine = self.engines.acquire(s.database_url)
            self.ctx.sessions = make_sessionmaker(self.ctx.engine)
            self.ctx.audit = AuditLog(self.ctx.sessions, self.spec.name)
        if "redis" in self.spec.needs and s.redis_url:
            # A blocking pool: a burst of requests waits up to 10 s for one of 100 connections
            # instead of failing at once with "Too many connections" (redis-py's default pool).
            # Retried on connection errors: after a restart of redis-server every pooled connection
            # fails its next command once. A command whose reply was lost may run twice; the
            # services' Redis writes are idempotent (sets, upserts, deduplicated queues).
            pool = aioredis.BlockingConnectionPool.from_url(
                s.redis_url,
                max_connections=100,
                timeout=10,
                socket_connect_timeout=2,
                socket_timeout=2,
                retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), 3),
                retry_on_error=[redis.exceptions.ConnectionError, redis.exceptions.TimeoutError],
            )
            self.ctx.redis = aioredis.Redis.from_pool(pool)
            if self.ctx.audit is not None:
                self.ctx.audit_outbox = AuditOutbox(self.ctx.redis, self.ctx.audit, self.spec.name)
        if "nats" in self.spec.needs and s.nats_url:
            await self._retry("nats", lambda: self.ctx.bus.connect(s.nats_url or ""))

    async def _retry(self, name: str, connect: Callable[[], Any]) -> None:
        def log_wait(state: RetryCallState) -> None:
            error = state.outcome.exception() if state.outcome else None
            log.warning("%s is not reachable yet (%s); retrying in %.1f s", name, error, state.upcoming_sleep)

        retrying = AsyncRetrying(
            wait=wait_exponential(multiplier=0.2, max=5.0),
            sleep=_pause_unless(self.stopping),
            before_sleep=log_wait,
        )
        async for attempt in retrying:
            # Checked before every try, not only at a failure: a stop during the pause ends it.
            if self.stopping.is_set():
                return
            with attempt:
                await connect()

    async def dependency_status(self) -> dict[str, DependencyStatus]:
        status: dict[str, DependencyStatus] = {}
        if "nats" in self.spec.needs:
            status["nats"] = DependencyStatus(
                self.ctx.bus.connected, "" if self.ctx.bus.connected else "not connected"
            )
        if "redis" in self.spec.needs:
            status["redis"] = await self._probe(self._ping_redis)
        if "postgres" in self.spec.needs:
            status["postgres"] = await self._probe(self._ping_postgres)
        status["service"] = DependencyStatus(self.app_started, "started" if self.app_started else "starting")
        if self.app_started:
            status.update(self.app.readiness())
        for name, item in status.items():
            self.metrics.set_dependency(name, item.ready, item.required)
        self.gate.note(status)
        return status

    async def _probe(self, check: Callable[[], Any]) -> DependencyStatus:
        try:
            await asyncio.wait_for(check(), 1.5)
            return DependencyStatus(True)
        except Exception as error:
            return DependencyStatus(False, f"{type(error).__name__}: {error}"[:200])

    async def _ping_redis(self) -> None:
        if self.ctx.redis is None:
            raise RuntimeError("not configured")
        await self.ctx.redis.ping()

    async def _ping_postgres(self) -> None:
        if self.ctx.engine is None:
            raise RuntimeError("not configured")
        async with self.ctx.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))

    async def _postgres_start_time(self) -> float:
        if self.ctx.engine is None:
            raise RuntimeError("not configured")
        async with self.ctx.engine.connect() as conn:
            started = (await conn.execute(text("SELECT pg_postmaster_start_time()"))).scalar_one()
        return float(started.timestamp())

    async def _probe_postgres_restart(self) -> bool:
        """True while PostgreSQL answers. A changed start time means it went away between two
        probes: the outage is opened at the last answer seen, so that it is recorded too."""
        try:
            started = await asyncio.wait_for(self._postgres_start_time(), 1.5)
        except Exception:
            return False
        previous, self._postgres_started = self._postgres_started, started
        if previous is not None and started != previous and self.ctx.postgres_down_since is None:
            self.ctx.postgres_down_since = self._postgres_last_ok or started
        self._postgres_last_ok = time.time()
        return True

    async def watch_postgres(self, every: float = 0.5) -> None:
        """Notice an outage of PostgreSQL at once, and put it in the audit log when it ends."""
        if "postgres" not in self.spec.needs or self.ctx.engine is None:
            return
        # Each at its own phase: the services that share a process and its pool, all ready at about the
        # same moment, would otherwise probe in step and open connections beyond the pool's idle ones.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stopping.wait(), random.uniform(0, every))
        while not self.stopping.is_set():
            ok = await self._probe_postgres_restart()
            down_since = self.ctx.postgres_down_since
            if not ok and not self._outage_logged:
                self.ctx.note_postgres_trouble()
                self._outage_logged = True
                log.warning(
                    "PostgreSQL is not reachable; work that needs it is answered 503 until it is back"
                )
            if ok and self.ctx.audit_outbox is not None:
                await self._drain_audit_outbox(self.ctx.audit_outbox)
            if ok and down_since is not None:
                self.ctx.postgres_down_since = None
                self._outage_logged = False
                seconds = round(max(0.0, time.time() - down_since), 1)
                log.warning("PostgreSQL is back after %.1f s", seconds)
                await self.ctx.record(
                    actor="kronii",
                    action="service.outage",
                    subject="postgres",
                    outcome="recovered",
                    down_at=datetime.fromtimestamp(down_since, UTC).isoformat(),
                    seconds=seconds,
                )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), every)

    async def _drain_audit_outbox(self, outbox: AuditOutbox) -> None:
        try:
            moved = await outbox.drain_once()
        except Exception as error:
            log.debug("the audit outbox waits: %s", error)
            return
        if moved:
            log.info("appended %d audit row(s) that waited in the outbox", moved)

    # ---- HTTP --------------------------------------------------------------------------------

    def http_app(self) -> FastAPI:
        app = FastAPI(title=f"kronii {self.spec.name}", version="0.1.0", docs_url="/docs", redoc_url=None)
        metrics = self.metrics
        name = self.spec.name
        app.add_middleware(RefusalMiddleware)  # innermost: sees what a route lets escape
        app.add_middleware(GateMiddleware, gate=self.gate)
        install_limits(app)  # inside the access check: a refused caller's body is never read
        install_openapi(app, open_paths=OPEN_HTTP_PATHS, token_free=self.access.rules.token_free_http)
        # Added first, so it sits inside the request counter: refusals are counted too.
        app.add_middleware(AccessMiddleware, policy=self.access)
        install_unavailable_handlers(app)
        install_error_handler(app)

        @app.middleware("http")
        async def count_requests(request: Request, call_next: Any) -> Response:
            started = time.perf_counter()
            response: Response = await call_next(request)
            route = request.scope.get("route")
            path = getattr(route, "path", "unmatched")
            metrics.http_requests.labels(name, path, str(response.status_code)).inc()
            metrics.http_duration.labels(name, path).observe(time.perf_counter() - started)
            return response

        @app.get("/healthz", tags=["health"])
        async def healthz() -> dict[str, Any]:
            return {"status": "ok", "service": name, "uptime_s": round(time.time() - self.ctx.started_at, 1)}

        @app.get("/readyz", tags=["health"])
        async def readyz() -> JSONResponse:
            status = await self.dependency_status()
            ready = all(item.ready for item in status.values() if item.required)
            body = {
                "ready": ready,
                "service": name,
                "dependencies": {
                    key: {"ready": item.ready, "required": item.required, "detail": item.detail}
                    for key, item in status.items()
                },
            }
            return JSONResponse(body, status_code=200 if ready else 503)

        @app.get("/metrics", tags=["health"])
        async def prometheus_metrics() -> Response:
            # Probed on every scrape too, so kronii_dependency_ready is current even where nothing
            # polls /readyz (host agents under `kronii up`).
            await self.dependency_status()
            return Response(generate_latest(self.registry), media_type=CONTENT_TYPE_LATEST)

        for router in self.app.routers():
            app.include_router(router)
        return app

    # ---- gRPC --------------------------------------------------------------------------------

    async def start_grpc(self) -> None:
        if not self.settings.grpc_port:
            return
        access = AccessInterceptor(self.access, lambda: self.grpc_bound_port)
        interceptors = [access, GuardInterceptor(), KroniiErrorInterceptor(), GateInterceptor(self.gate)]
        server = grpc.aio.server(interceptors=interceptors)
        names = list(self.app.add_to_grpc(server))
        health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
        reflection.enable_server_reflection(
            [*names, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME],
            server,
        )
        address = f"{self.settings.host}:{self.settings.grpc_port}"
        self.grpc_bound_port = server.add_insecure_port(address)
        if self.grpc_bound_port == 0:
            raise OSError(f"cannot listen for gRPC on {address}")
        await server.start()
        self.grpc_server = server
        self.grpc_names = names

    async def set_serving(self, serving: bool) -> None:
        status = (
            health_pb2.HealthCheckResponse.SERVING if serving else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        for service_name in ["", *self.grpc_names]:
            await self.health.set(service_name, status)

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
            await self.connect()
            await self.wait_for_schema()
            if self.stopping.is_set():
                return
            await self.app.start(self.ctx)
            self.app_started = True
            await self.start_grpc()
            await self.set_serving(True)
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
            watch = asyncio.create_task(self.watch_postgres(), name="postgres-watch")
            stop_wait = asyncio.create_task(self.stopping.wait())
            done, _ = await asyncio.wait({stop_wait, http_task}, return_when=asyncio.FIRST_COMPLETED)
            if http_task in done and not self.stopping.is_set():
                raise RuntimeError("the HTTP server stopped unexpectedly (is the port in use?)")
            stop_wait.cancel()
            watch.cancel()
        finally:
            await self.shutdown(http, http_task)

    async def shutdown(self, http: uvicorn.Server, http_task: asyncio.Task[None]) -> None:
        log.info("%s stopping", self.spec.name)
        with contextlib.suppress(Exception):
            await self.set_serving(False)
        if self.grpc_server is not None:
            await self.grpc_server.stop(grace=0.5)
        if self.app_started:
            try:
                await asyncio.wait_for(self.app.stop(), 2.0)
            except Exception:
                log.exception("stopping %s failed", self.spec.name)
        http.should_exit = True
        with contextlib.suppress(Exception):
            await asyncio.wait_for(http_task, 1.5)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.ctx.bus.close(), 1.0)
        if self.ctx.redis is not None:
            with contextlib.suppress(Exception):
                await self.ctx.redis.aclose()
        if self.ctx.engine is not None:
            with contextlib.suppress(Exception):
                await self.engines.release(self.ctx.engine)
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
