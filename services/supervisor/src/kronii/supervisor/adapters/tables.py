"""The supervisor's tables in PostgreSQL (created by migration 0003_supervisor_registry, widened by
0006 and 0009). The check constraints are written from the core's enums: the migrations freeze the
same lists, and a test holds the two in step (tests/integration/supervisor/test_supervisor_records_every_row.py)."""

from __future__ import annotations

from enum import StrEnum

from kronii.supervisor.core.model import Backend, Result, RuntimeStatus
from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    DateTime,
    Index,
    Integer,
    MetaData,
    Table,
    Text,
)
from sqlalchemy.dialects.postgresql import JSONB

__all__ = ["runtimes", "trigger_attempts", "triggers", "values_check"]


def values_check(column: str, values: type[StrEnum]) -> str:
    """`column IN (...)` over every value of the enum: the SQL of a `*_known` check constraint."""
    return f"{column} IN ({', '.join(repr(member.value) for member in values)})"


_metadata = MetaData()

runtimes = Table(
    "supervisor_runtimes",
    _metadata,
    Column("runtime_id", Text, primary_key=True),
    Column("agent_id", Text, nullable=False),
    Column("workspace_id", Text, nullable=False),
    Column("session_id", Text, nullable=False),
    Column("pty_backend", Text, nullable=False),
    Column("pty_target", Text, nullable=False),
    Column("pid", Integer, nullable=False),
    Column("status", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("role", Text, nullable=False),
    Column("managed", Boolean, nullable=False),
    Column("paused", Boolean, nullable=False),
    Column("operator_busy", Boolean, nullable=False),
    Column("command", JSONB, nullable=False),
    Column("registered_at", DateTime(timezone=True), nullable=False),
    Column("last_heartbeat_at", DateTime(timezone=True)),
    Column("last_activity_at", DateTime(timezone=True)),
    Column("offline_reason", Text, nullable=False),
    Column("cwd", Text, nullable=False),
    CheckConstraint(values_check("status", RuntimeStatus), name="status_known"),
    Index("ix_supervisor_runtimes_agent", "workspace_id", "agent_id"),
)

triggers = Table(
    "supervisor_triggers",
    _metadata,
    Column("trigger_id", Text, primary_key=True),
    Column("agent_id", Text, nullable=False),
    Column("workspace_id", Text, nullable=False),
    Column("thread_id", Text, nullable=False),
    Column("runtime_id", Text, nullable=False),
    Column("caller", Text, nullable=False),
    Column("reason", Text, nullable=False),
    Column("result", Text, nullable=False),
    Column("delivery_backend", Text, nullable=False),
    Column("error_code", Text, nullable=False),
    Column("fallback_chain", JSONB, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("delivered_at", DateTime(timezone=True)),
    Column("deferred_until", DateTime(timezone=True)),
    Column("detail", Text, nullable=False),
    CheckConstraint(values_check("result", Result), name="result_known"),
    CheckConstraint(values_check("delivery_backend", Backend), name="delivery_backend_known"),
)

trigger_attempts = Table(
    "supervisor_trigger_attempts",
    _metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("trigger_id", Text, nullable=False),
    Column("at", DateTime(timezone=True), nullable=False),
    Column("step", Text, nullable=False),
    Column("outcome", Text, nullable=False),
    Column("detail", JSONB, nullable=False),
    Index("ix_supervisor_trigger_attempts_trigger", "trigger_id"),
)
