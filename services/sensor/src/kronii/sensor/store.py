"""The sensor's table in PostgreSQL (created by migration 0002_activity_events)."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, DateTime, MetaData, Table, Text
from sqlalchemy.dialects.postgresql import JSONB

__all__ = ["activity_events"]

activity_events = Table(
    "activity_events",
    MetaData(),
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("at", DateTime(timezone=True), nullable=False),
    Column("kind", Text, nullable=False),
    Column("state", Text, nullable=False),
    Column("detail", JSONB, nullable=False),
)
