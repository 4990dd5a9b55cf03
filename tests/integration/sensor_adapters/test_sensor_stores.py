"""The sensor's stores against the real servers: a batch of envelopes lands in `activity_events` as
written; closed spans land in `activity_spans` in one call, new ones inserted and one written while
open given its end; and the snapshot in Redis reads back as the message that was put, under the key
the pipeline and capture read."""

from __future__ import annotations

from datetime import UTC, datetime

import redis.asyncio as aioredis
from kronii.activity.v1 import activity_pb2 as pb
from kronii.runtime.rendezvous import SENSOR_SNAPSHOT_KEY
from kronii.sensor.adapters.events import ActivityEventStore, activity_events
from kronii.sensor.adapters.snapshots import RedisSnapshotStore
from kronii.sensor.adapters.spans import SpanTable, activity_spans
from kronii.sensor.core.spans import Span, SpanData, SpanKind
from kronii.stores.db import make_engine
from sqlalchemy import select

from tests.infra import InfraUrls


async def test_a_batch_of_envelopes_lands_in_activity_events(migrated_database: str) -> None:
    engine = make_engine(migrated_database)
    marker = f"test-{datetime.now(UTC).timestamp()}"
    at = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    rows = [
        {"at": at, "kind": "lock", "state": "locked", "detail": {"source": marker}},
        {"at": at, "kind": "unlock", "state": "active", "detail": {"source": marker}},
    ]
    try:
        await ActivityEventStore(engine).append(rows)
        async with engine.connect() as conn:
            found = (
                await conn.execute(
                    select(activity_events.c.kind, activity_events.c.state, activity_events.c.at)
                    .where(activity_events.c.detail["source"].astext == marker)
                    .order_by(activity_events.c.id)
                )
            ).all()
    finally:
        await engine.dispose()
    assert [tuple(row) for row in found] == [("lock", "locked", at), ("unlock", "active", at)]


async def test_closed_spans_are_written_in_one_call_new_ones_inserted_an_open_ones_end_updated(
    migrated_database: str,
) -> None:
    engine = make_engine(migrated_database)
    start = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC).timestamp()
    marker = f"app-{datetime.now(UTC).timestamp()}"
    table = SpanTable(engine)
    written_open = Span(1, SpanKind.FOCUS, SpanData(app=marker, title="one", window_id=7), start, start + 30)
    try:
        row_id = await table.insert(written_open)
        await table.write_closed(
            [
                (Span(1, SpanKind.FOCUS, written_open.data, start, start + 42), row_id),
                (
                    Span(
                        2,
                        SpanKind.FOCUS,
                        SpanData(app=marker, title="two", window_id=8),
                        start + 42,
                        start + 50,
                    ),
                    None,
                ),
            ]
        )
        async with engine.connect() as conn:
            found = (
                await conn.execute(
                    select(activity_spans.c.id, activity_spans.c.title, activity_spans.c.ended_at)
                    .where(activity_spans.c.app == marker)
                    .order_by(activity_spans.c.started_at)
                )
            ).all()
    finally:
        await engine.dispose()
    assert [(row.title, row.ended_at.timestamp()) for row in found] == [
        ("one", start + 42),
        ("two", start + 50),
    ]
    assert found[0].id == row_id


async def test_the_snapshot_reads_back_from_the_key_the_other_services_read(infra: InfraUrls) -> None:
    client = aioredis.from_url(infra.redis)
    try:
        await client.delete(SENSOR_SNAPSHOT_KEY)
        store = RedisSnapshotStore(client)
        assert await store.get() is None
        await store.put(pb.Snapshot(idle_ms=1234, locked=True))
        assert await store.get() == pb.Snapshot(idle_ms=1234, locked=True)
        assert await client.get(SENSOR_SNAPSHOT_KEY) is not None
    finally:
        await client.delete(SENSOR_SNAPSHOT_KEY)
        await client.aclose()
