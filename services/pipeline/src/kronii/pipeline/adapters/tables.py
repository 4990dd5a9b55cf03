"""The pipeline's tables in PostgreSQL (created by migration 0005_pipeline)."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Boolean, Column, DateTime, Float, Index, Integer, MetaData, Table, Text
from sqlalchemy.dialects.postgresql import JSONB

__all__ = ["as_datetime", "as_epoch", "notifications", "plugins", "runs", "source_controls"]

_metadata = MetaData()

plugins = Table(
    "pipeline_plugins",
    _metadata,
    Column("app_id", Text, primary_key=True),
    Column("display_name", Text, nullable=False),
    Column("version", Text, nullable=False),
    Column("installed", Boolean, nullable=False),
    Column("enabled", Boolean, nullable=False),
    Column("capabilities", JSONB, nullable=False),
    Column("risk_score", Float, nullable=False),
    Column("registered_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("last_seen_at", DateTime(timezone=True)),
)

runs = Table(
    "pipeline_runs",
    _metadata,
    Column("run_id", Text, primary_key=True),
    Column("trigger_summary", Text, nullable=False),
    Column("states", JSONB, nullable=False),
    Column("route", Text, nullable=False),
    Column("plugins_used", JSONB, nullable=False),
    Column("redaction_level", Text, nullable=False),
    Column("model_calls", JSONB, nullable=False),
    Column("tokens_in", Integer, nullable=False),
    Column("tokens_out", Integer, nullable=False),
    Column("cost_estimate", Float, nullable=False),
    Column("decision", Text, nullable=False),
    Column("notes", JSONB, nullable=False),
    Column("notification_id", Text, nullable=False),
    Column("next_wakeup_at", DateTime(timezone=True)),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("finished_at", DateTime(timezone=True)),
    Index("ix_pipeline_runs_created_at", "created_at"),
)

notifications = Table(
    "pipeline_notifications",
    _metadata,
    Column("id", Text, primary_key=True),
    Column("channel", Text, nullable=False),
    Column("title", Text, nullable=False),
    Column("body", Text, nullable=False),
    Column("source_summary", Text, nullable=False),
    Column("source_key", Text, nullable=False),
    Column("actions", JSONB, nullable=False),
    Column("run_id", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Index("ix_pipeline_notifications_created_at", "created_at"),
)

source_controls = Table(
    "pipeline_source_controls",
    _metadata,
    Column("source_key", Text, primary_key=True),
    Column("snoozed_until", DateTime(timezone=True)),
    Column("disabled", Boolean, nullable=False),
    Column("notification_id", Text, nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)


def as_datetime(at: float | None) -> datetime | None:
    """Epoch seconds (how the core passes time) to an aware datetime for a timestamptz column."""
    return None if at is None else datetime.fromtimestamp(at, UTC)


def as_epoch(at: datetime | None) -> float | None:
    return None if at is None else at.timestamp()
