"""The supervisor's tables in PostgreSQL (created by migration 0003_supervisor_registry)."""

from __future__ import annotations

from sqlalchemy import BigInteger, Boolean, Column, DateTime, Integer, MetaData, Table, Text
from sqlalchemy.dialects.postgresql import JSONB

__all__ = ["runtimes", "trigger_attempts", "triggers"]

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
)
