"""The supervisor's runtime registry (seed 002, section 8.2), its trigger outcomes and every
trigger attempt with its details (fallback chain, override audit fields).

Revision ID: 0003_supervisor_registry
Revises: 0002_activity_events
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0003_supervisor_registry"
down_revision = "0002_activity_events"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "supervisor_runtimes",
        sa.Column("runtime_id", sa.Text, primary_key=True),
        sa.Column("agent_id", sa.Text, nullable=False),
        sa.Column("workspace_id", sa.Text, nullable=False),
        sa.Column("session_id", sa.Text, nullable=False, server_default=""),
        sa.Column("pty_backend", sa.Text, nullable=False, server_default="tmux"),
        sa.Column("pty_target", sa.Text, nullable=False),
        sa.Column("pid", sa.Integer, nullable=False, server_default="0"),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("kind", sa.Text, nullable=False, server_default="generic"),
        sa.Column("role", sa.Text, nullable=False, server_default=""),
        sa.Column("managed", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("paused", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("operator_busy", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("command", postgresql.JSONB, nullable=False, server_default=sa.text("'[]'::jsonb")),
        sa.Column("registered_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_heartbeat_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_activity_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("offline_reason", sa.Text, nullable=False, server_default=""),
        sa.CheckConstraint("status IN ('active', 'idle', 'offline')", name="status_known"),
    )
    op.create_index("ix_supervisor_runtimes_agent", "supervisor_runtimes", ["workspace_id", "agent_id"])
    op.create_table(
        "supervisor_triggers",
        sa.Column("trigger_id", sa.Text, primary_key=True),
        sa.Column("agent_id", sa.Text, nullable=False),
        sa.Column("workspace_id", sa.Text, nullable=False),
        sa.Column("thread_id", sa.Text, nullable=False, server_default=""),
        sa.Column("runtime_id", sa.Text, nullable=False, server_default=""),
        sa.Column("caller", sa.Text, nullable=False),
        sa.Column("reason", sa.Text, nullable=False, server_default=""),
        sa.Column("result", sa.Text, nullable=False),
        sa.Column("delivery_backend", sa.Text, nullable=False, server_default=""),
        sa.Column("error_code", sa.Text, nullable=False, server_default=""),
        sa.Column("fallback_chain", postgresql.JSONB, nullable=False, server_default=sa.text("'[]'::jsonb")),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("delivered_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("deferred_until", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "result IN ('delivered', 'already_active', 'deferred', 'timeout', 'failed')", name="result_known"
        ),
    )
    op.create_table(
        "supervisor_trigger_attempts",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("trigger_id", sa.Text, nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("step", sa.Text, nullable=False),
        sa.Column("outcome", sa.Text, nullable=False),
        sa.Column("detail", postgresql.JSONB, nullable=False, server_default=sa.text("'{}'::jsonb")),
    )
    op.create_index("ix_supervisor_trigger_attempts_trigger", "supervisor_trigger_attempts", ["trigger_id"])


def downgrade() -> None:
    op.drop_table("supervisor_trigger_attempts")
    op.drop_table("supervisor_triggers")
    op.drop_table("supervisor_runtimes")
