"""While PostgreSQL is away an audit row waits in Redis and is appended, once, when it is back.

Real PostgreSQL and Redis (the suite's); "away" is a real refused connection to a closed port."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
import pytest_asyncio
import redis.asyncio as aioredis
from kronii.launcher.infra import free_port
from kronii.stores.audit import AuditRow
from sqlalchemy import select

from tests.infra import InfraUrls, service_context

pytestmark = pytest.mark.asyncio

SERVICE = "outboxtest"


@pytest_asyncio.fixture
async def redis(infra: InfraUrls) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(infra.redis.rsplit("/", 1)[0] + "/15")
    key = f"kronii:audit:outbox:{SERVICE}"
    await client.delete(key)
    try:
        yield client
    finally:
        await client.delete(key)
        await client.aclose()


async def test_audit_row_waits_in_the_outbox_and_is_appended_once_with_its_own_time(
    migrated_database: str, redis: aioredis.Redis
) -> None:
    away = service_context(f"postgresql://kronii:nothing@127.0.0.1:{free_port()}/kronii", redis, SERVICE)
    back = service_context(migrated_database, redis, SERVICE)
    subject = f"job-{uuid.uuid4().hex[:8]}"
    try:
        before = datetime.now(UTC)
        await away.record(actor="test", action="capture.job", subject=subject, outcome="persisted", frames=3)
        assert await away.audit_outbox.waiting() == 1
        waiting = await redis.lindex(back.audit_outbox.key, 0)

        assert await back.audit_outbox.drain_once() == 1
        async with back.sessions() as session:
            rows = (await session.scalars(select(AuditRow).where(AuditRow.subject == subject))).all()
        assert len(rows) == 1
        assert rows[0].detail["frames"] == 3
        assert rows[0].service == SERVICE
        assert before <= rows[0].at <= datetime.now(UTC)

        # A drain cut between its commit and its pop: the row is not appended twice.
        assert waiting is not None
        await redis.rpush(back.audit_outbox.key, waiting)
        assert await back.audit_outbox.drain_once() == 1
        async with back.sessions() as session:
            again = (await session.scalars(select(AuditRow).where(AuditRow.subject == subject))).all()
        assert len(again) == 1
        assert (await back.audit.verify()).ok
    finally:
        await away.engine.dispose()
        await back.engine.dispose()
