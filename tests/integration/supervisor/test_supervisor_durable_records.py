"""A trigger's outcome is durable before it is answered: in PostgreSQL with its audit row, or, when
PostgreSQL is away, in the Redis outbox, drained into PostgreSQL exactly once when it is back.

Real PostgreSQL and Redis (the suite's); "away" is a real refused connection to a closed port."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest
import pytest_asyncio
import redis.asyncio as aioredis
from kronii.launcher.infra import free_port
from kronii.runtime.service import ServiceContext
from kronii.stores.audit import AuditRow
from kronii.supervisor.adapters.tables import triggers
from kronii.supervisor.adapters.trigger_records import OUTBOX_KEY, TriggerRecords
from sqlalchemy import func, select

from tests.infra import InfraUrls, service_context

pytestmark = pytest.mark.asyncio


@pytest_asyncio.fixture
async def redis(infra: InfraUrls) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(infra.redis.rsplit("/", 1)[0] + "/15")
    await client.delete(OUTBOX_KEY)
    try:
        yield client
    finally:
        await client.delete(OUTBOX_KEY)
        await client.aclose()


def _row(trigger_id: str) -> dict[str, Any]:
    now = datetime.now(UTC)
    return {
        "trigger_id": trigger_id, "agent_id": "a1", "workspace_id": "w1", "thread_id": "", "runtime_id": "r1",
        "caller": "test", "reason": "", "result": "delivered", "delivery_backend": "tmux",
        "error_code": "", "fallback_chain": ["tmux_send_keys"], "created_at": now, "updated_at": now,
        "delivered_at": now, "deferred_until": None, "detail": "the agent took the prompt",
    }  # fmt: skip


def _audit(trigger_id: str) -> dict[str, Any]:
    return {"actor": "test", "action": "supervisor.trigger", "subject": trigger_id, "outcome": "delivered"}


async def _counts(ctx: ServiceContext, trigger_id: str) -> tuple[int, int]:
    assert ctx.sessions is not None
    async with ctx.sessions() as session:
        rows = await session.scalar(
            select(func.count()).select_from(triggers).where(triggers.c.trigger_id == trigger_id)
        )
        audits = await session.scalar(
            select(func.count()).select_from(AuditRow).where(AuditRow.subject == trigger_id)
        )
    return int(rows or 0), int(audits or 0)


async def test_outcome_is_committed_with_its_audit_row_when_postgres_is_there(
    migrated_database: str, redis: aioredis.Redis
) -> None:
    ctx = service_context(migrated_database, redis)
    trigger_id = f"t-{uuid.uuid4().hex[:8]}"
    try:
        assert await TriggerRecords(ctx, redis).commit(_row(trigger_id), _audit(trigger_id)) == "postgres"
        assert await _counts(ctx, trigger_id) == (1, 1)
        assert await redis.llen(OUTBOX_KEY) == 0
    finally:
        assert ctx.engine is not None
        await ctx.engine.dispose()


async def test_outcome_waits_in_the_outbox_while_postgres_is_away_and_lands_exactly_once(
    migrated_database: str, redis: aioredis.Redis
) -> None:
    away = service_context(f"postgresql://kronii:nothing@127.0.0.1:{free_port()}/kronii", redis)
    back = service_context(migrated_database, redis)
    trigger_id = f"t-{uuid.uuid4().hex[:8]}"
    try:
        assert await TriggerRecords(away, redis).commit(_row(trigger_id), _audit(trigger_id)) == "outbox"
        assert await redis.llen(OUTBOX_KEY) == 1
        assert await _counts(back, trigger_id) == (0, 0)

        waiting = await redis.lindex(OUTBOX_KEY, 0)
        records = TriggerRecords(back, redis)
        assert await records.drain_once() == 1
        assert await _counts(back, trigger_id) == (1, 1)
        assert await redis.llen(OUTBOX_KEY) == 0

        # A drain cut between its commit and its pop leaves the item listed: it must not add a second row.
        assert waiting is not None
        await redis.rpush(OUTBOX_KEY, waiting)
        assert await records.drain_once() == 1
        assert await _counts(back, trigger_id) == (1, 1)
    finally:
        for ctx in (away, back):
            assert ctx.engine is not None
            await ctx.engine.dispose()


async def test_drain_stops_at_the_first_failure_and_keeps_the_rest(
    migrated_database: str, redis: aioredis.Redis
) -> None:
    away = service_context(f"postgresql://kronii:nothing@127.0.0.1:{free_port()}/kronii", redis)
    trigger_ids = [f"t-{uuid.uuid4().hex[:8]}" for _ in range(3)]
    try:
        for trigger_id in trigger_ids:
            await TriggerRecords(away, redis).commit(_row(trigger_id), _audit(trigger_id))
        with pytest.raises(Exception):  # noqa: B017 - any driver error: PostgreSQL is still away
            await TriggerRecords(away, redis).drain_once()
        assert await redis.llen(OUTBOX_KEY) == 3
    finally:
        assert away.engine is not None
        await away.engine.dispose()
