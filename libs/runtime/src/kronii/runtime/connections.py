"""A service's connections to its dependencies: NATS, Redis and PostgreSQL opened (NATS tried again
until it answers or the service is told to stop), the wait for the launcher's schema, a probe of each
for readiness, and their closing."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any

import redis.asyncio as aioredis
import redis.exceptions
from kronii.runtime.context import ServiceContext
from kronii.runtime.spec import DependencyStatus
from kronii.stores.audit import AuditLog
from kronii.stores.db import EngineShare, make_sessionmaker
from kronii.stores.durable import AuditOutbox
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from sqlalchemy import text
from tenacity import AsyncRetrying, RetryCallState, wait_exponential

__all__ = [
    "close_dependencies",
    "connect_dependencies",
    "probe_dependencies",
    "retry_until_stopped",
    "wait_for_schema",
]

# The runtime's lines keep the logger name they have always had.
log = logging.getLogger("kronii.runtime.service")


def _pause_unless(stopping: asyncio.Event) -> Callable[[float], Awaitable[None]]:
    """A pause between tries that a stop cuts short."""

    async def pause(secs: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stopping.wait(), secs)

    return pause


async def retry_until_stopped(name: str, connect: Callable[[], Any], *, stopping: asyncio.Event) -> None:
    """Call `connect` until it answers, with a doubling pause between tries, or until `stopping` is set."""

    def log_wait(state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        log.warning("%s is not reachable yet (%s); retrying in %.1f s", name, error, state.upcoming_sleep)

    retrying = AsyncRetrying(
        wait=wait_exponential(multiplier=0.2, max=5.0),
        sleep=_pause_unless(stopping),
        before_sleep=log_wait,
    )
    async for attempt in retrying:
        # Checked before every try, not only at a failure: a stop during the pause ends it.
        if stopping.is_set():
            return
        with attempt:
            await connect()


async def wait_for_schema(stopping: asyncio.Event) -> None:
    """Under `kronii up`, wait until the launcher's migrations are done (it touches the file), so
    that a service's start never queries a table that does not exist yet."""
    marker = os.environ.get("KRONII_SCHEMA_READY_FILE")
    if not marker:
        return
    while not await asyncio.to_thread(os.path.exists, marker):
        try:
            await asyncio.wait_for(stopping.wait(), 0.1)
        except TimeoutError:
            continue
        return  # stopping before the schema was ready


def _redis_client(url: str) -> aioredis.Redis:
    # A blocking pool: a burst of requests waits up to 10 s for one of 100 connections
    # instead of failing at once with "Too many connections" (redis-py's default pool).
    # Retried on connection errors: after a restart of redis-server every pooled connection
    # fails its next command once. A command whose reply was lost may run twice; the
    # services' Redis writes are idempotent (sets, upserts, deduplicated queues).
    pool = aioredis.BlockingConnectionPool.from_url(
        url,
        max_connections=100,
        timeout=10,
        socket_connect_timeout=2,
        socket_timeout=2,
        retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), 3),
        retry_on_error=[redis.exceptions.ConnectionError, redis.exceptions.TimeoutError],
    )
    return aioredis.Redis.from_pool(pool)


async def connect_dependencies(ctx: ServiceContext, engines: EngineShare, stopping: asyncio.Event) -> None:
    """Connect every dependency the service needs into its context, retrying NATS until it answers or
    the service is told to stop."""
    s, needs, name = ctx.settings, ctx.spec.needs, ctx.spec.name
    if "postgres" in needs and s.database_url:
        ctx.engine = engines.acquire(s.database_url)
        ctx.sessions = make_sessionmaker(ctx.engine)
        ctx.audit = AuditLog(ctx.sessions, name)
    if "redis" in needs and s.redis_url:
        ctx.redis = _redis_client(s.redis_url)
        if ctx.audit is not None:
            ctx.audit_outbox = AuditOutbox(ctx.redis, ctx.audit, name)
    if "nats" in needs and s.nats_url:
        await retry_until_stopped("nats", lambda: ctx.bus.connect(s.nats_url or ""), stopping=stopping)


async def probe_dependencies(ctx: ServiceContext) -> dict[str, DependencyStatus]:
    """Whether each dependency the service needs answers now (a probe waits at most 1.5 s)."""
    status: dict[str, DependencyStatus] = {}
    needs = ctx.spec.needs
    if "nats" in needs:
        status["nats"] = DependencyStatus(ctx.bus.connected, "" if ctx.bus.connected else "not connected")
    if "redis" in needs:
        status["redis"] = await _probe(lambda: _ping_redis(ctx))
    if "postgres" in needs:
        status["postgres"] = await _probe(lambda: _ping_postgres(ctx))
    return status


async def _probe(check: Callable[[], Any]) -> DependencyStatus:
    try:
        await asyncio.wait_for(check(), 1.5)
        return DependencyStatus(True)
    except Exception as error:
        return DependencyStatus(False, f"{type(error).__name__}: {error}"[:200])


async def _ping_redis(ctx: ServiceContext) -> None:
    if ctx.redis is None:
        raise RuntimeError("not configured")
    await ctx.redis.ping()


async def _ping_postgres(ctx: ServiceContext) -> None:
    if ctx.engine is None:
        raise RuntimeError("not configured")
    async with ctx.engine.connect() as conn:
        await conn.execute(text("SELECT 1"))


async def close_dependencies(ctx: ServiceContext, engines: EngineShare) -> None:
    """Close the bus, Redis and the service's share of the PostgreSQL pool; a failure closes the rest."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(ctx.bus.close(), 1.0)
    if ctx.redis is not None:
        with contextlib.suppress(Exception):
            await ctx.redis.aclose()
    if ctx.engine is not None:
        with contextlib.suppress(Exception):
            await engines.release(ctx.engine)
