"""The ``capture_objects`` table: one row per sealed object (metadata and its wrapped content key)."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    DateTime,
    Float,
    Integer,
    LargeBinary,
    MetaData,
    Table,
    Text,
    column,
    table,
)
from sqlalchemy.dialects.postgresql import JSONB

__all__ = ["capture_jobs_spec", "capture_objects"]

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
)

# Only the two columns the listing joins on; the jobs table belongs to the job store.
capture_jobs_spec = table("capture_jobs", column("job_id", Text), column("spec", JSONB))
