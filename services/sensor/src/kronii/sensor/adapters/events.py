"""The sensor's table in PostgreSQL (created by migration 0002_activity_events): one envelope per
state change, focus change, lock and unlock, written in batches off the event path."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from kronii.sensor.core.snapshot import Envelope
from kronii.sensor.ports import StoreFailed
from sqlalchemy import BigInteger, Column, DateTime, Index, MetaData, Table, Text, insert
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = ["ActivityEventStore", "activity_events"]

activity_events = Table(
    "activity_events",
    MetaData(),
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("at", DateTime(timezone=True), nullable=False),
    Column("kind", Text, nullable=False),
    Column("state", Text, nullable=False),
    Column("detail", JSONB, nullable=False),
    Index("ix_activity_events_at", "at"),
)


class ActivityEventStore:
    """Envelopes into `activity_events`, one transaction per batch."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def append(self, rows: Sequence[Mapping[str, Any]]) -> None:
        async with self._engine.begin() as conn:
            await conn.execute(insert(activity_events), list(rows))

    async def write(self, envelopes: Sequence[Envelope]) -> None:
        """Raises StoreFailed when the batch was not written."""
        rows = [
            {
                "at": datetime.fromtimestamp(item.at, UTC),
                "kind": item.kind,
                "state": item.state,
                "detail": item.detail,
            }
            for item in envelopes
        ]
        try:
            await self.append(rows)
        except Exception as error:
            raise StoreFailed(str(error)) from error
