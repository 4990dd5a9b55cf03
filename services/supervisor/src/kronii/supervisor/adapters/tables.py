"""The supervisor's tables in PostgreSQL (created by migration 0003_supervisor_registry, widened by
0006 and 0009). The check constraints are written from the core's enums: the migrations freeze the
same lists, and a test holds the two in step (tests/integration/supervisor/test_supervisor_records_every_row.py)."""

from __future__ import annotations

from enum import StrEnum

from kronii.supervisor.core.model import Backend, Result, RuntimeStatus
from kronii.supervisor.core.threads import MessageKind
from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    DateTime,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB

__all__ = [
    "failure_offers",
    "runtimes",
    "thread_cursors",
    "thread_messages",
    "threads",
    "trigger_attempts",
    "triggers",
    "values_check",
]


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

# Threads (migration 0011): one row per thread with its guard, its messages in order, a read cursor
# per participant.
threads = Table(
    "supervisor_threads",
    _metadata,
    Column("workspace_id", Text, nullable=False),
    Column("thread_id", Text, nullable=False),
    Column("last_seq", BigInteger, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("turns_without_progress", Integer, nullable=False),
    Column("finding_key", Text, nullable=False),
    Column("finding_repeats", Integer, nullable=False),
    Column("blocked", Boolean, nullable=False),
    Column("blocked_reason", Text, nullable=False),
    PrimaryKeyConstraint("workspace_id", "thread_id", name="supervisor_threads_pkey"),
    Index("ix_supervisor_threads_updated", "updated_at"),
)

thread_messages = Table(
    "supervisor_thread_messages",
    _metadata,
    Column("workspace_id", Text, nullable=False),
    Column("thread_id", Text, nullable=False),
    Column("seq", BigInteger, nullable=False),
    Column("author", Text, nullable=False),
    Column("recipients", JSONB, nullable=False),
    Column("kind", Text, nullable=False),
    Column("body", Text, nullable=False),
    Column("finding_key", Text, nullable=False),
    Column("dedupe_key", Text, nullable=False),
    Column("at", DateTime(timezone=True), nullable=False),
    PrimaryKeyConstraint("workspace_id", "thread_id", "seq", name="supervisor_thread_messages_pkey"),
    CheckConstraint(values_check("kind", MessageKind), name="kind_known"),
    Index(
        "ux_supervisor_thread_messages_dedupe",
        "workspace_id",
        "thread_id",
        "dedupe_key",
        unique=True,
        postgresql_where=text("dedupe_key <> ''"),
    ),
)

thread_cursors = Table(
    "supervisor_thread_cursors",
    _metadata,
    Column("workspace_id", Text, nullable=False),
    Column("thread_id", Text, nullable=False),
    Column("participant", Text, nullable=False),
    Column("cursor", BigInteger, nullable=False),
    Column("seen_at", DateTime(timezone=True)),
    PrimaryKeyConstraint("workspace_id", "thread_id", "participant", name="supervisor_thread_cursors_pkey"),
)

# The critic's offers of a repeated failure to an agent, until the person's yes (or never).
failure_offers = Table(
    "supervisor_failure_offers",
    _metadata,
    Column("offer_id", Text, primary_key=True),
    Column("workspace_id", Text, nullable=False),
    Column("agent_id", Text, nullable=False),
    Column("failure_key", Text, nullable=False),
    Column("command_line", Text, nullable=False),
    Column("exit_code", Integer, nullable=False),
    Column("error_text", Text, nullable=False),
    Column("cwd", Text, nullable=False),
    Column("times", Integer, nullable=False),
    Column("offered_at", DateTime(timezone=True), nullable=False),
    Column("accepted_at", DateTime(timezone=True)),
    Column("thread_id", Text, nullable=False),
    Column("seq", BigInteger, nullable=False),
    Index("ix_supervisor_failure_offers_offered", "offered_at"),
)
