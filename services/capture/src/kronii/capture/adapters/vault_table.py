"""capture's tables: ``capture_objects``, one row per sealed object (metadata and its wrapped content
key), and ``capture_jobs``, one row per job (the job store writes it; the vault's listing joins it)."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Column,
    DateTime,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    Table,
    Text,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB

__all__ = ["capture_jobs", "capture_objects"]

_metadata = MetaData()

capture_objects = Table(
    "capture_objects",
    _metadata,
    Column("object_id", Text, primary_key=True),
    Column("job_id", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("width", Integer, nullable=False),
    Column("height", Integer, nullable=False),
    Column("score", Float, nullable=False),
    Column("redaction_level", Text, nullable=False),
    Column("masked_fraction", Float, nullable=False),
    Column("provider", Text, nullable=False),
    Column("key_version", Integer, nullable=False),
    Column("wrapped_key", LargeBinary),
    Column("size_bytes", BigInteger, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("expires_at", DateTime(timezone=True)),
    Column("purged_at", DateTime(timezone=True)),
    Index("ix_capture_objects_job", "job_id"),
    Index("ix_capture_objects_live_expiry", "expires_at", postgresql_where=text("purged_at IS NULL")),
)

capture_jobs = Table(
    "capture_jobs",
    _metadata,
    Column("job_id", Text, primary_key=True),
    Column("requester", Text, nullable=False),
    Column("merge_key", Text, nullable=False, server_default=""),
    Column("spec", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
    Column("status", Text, nullable=False),
    Column("reason", Text, nullable=False, server_default=""),
    Column("history", JSONB, nullable=False, server_default=text("'[]'::jsonb")),
    Column("primary_screenshot_id", Text, nullable=True),
    Column("meta", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("deadline_at", DateTime(timezone=True), nullable=False),
    CheckConstraint(
        "status IN ('queued', 'waiting', 'capturing', 'scoring', 'redacting', 'persisted', "
        "'expired', 'rejected', 'failed', 'cancelled')",
        name="status_known",
    ),
    Index("ix_capture_jobs_created", "created_at"),
    Index("ix_capture_jobs_merge_key", "merge_key", "created_at"),
)
