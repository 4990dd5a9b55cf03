"""The pipeline's tables: the plugin registry, every run with its path through the states, the
notifications it sent, and the user's snooze/disable controls per source.

Revision ID: 0005_pipeline
Revises: 0004_capture
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0005_pipeline"
down_revision = "0004_capture"
branch_labels = None
depends_on = None

_EMPTY_LIST = sa.text("'[]'::jsonb")


def upgrade() -> None:
    op.create_table(
        "pipeline_plugins",
        sa.Column("app_id", sa.Text, primary_key=True),
        sa.Column("display_name", sa.Text, nullable=False, server_default=""),
        sa.Column("version", sa.Text, nullable=False, server_default=""),
        sa.Column("installed", sa.Boolean, nullable=False, server_default=sa.true()),
        sa.Column("enabled", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("capabilities", postgresql.JSONB, nullable=False, server_default=sa.text("'{}'::jsonb")),
        sa.Column("risk_score", sa.Float, nullable=False, server_default="0"),
        sa.Column("registered_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("risk_score >= 0 AND risk_score <= 1", name="risk_score_range"),
    )
    op.create_table(
        "pipeline_runs",
        sa.Column("run_id", sa.Text, primary_key=True),
        sa.Column("trigger_summary", sa.Text, nullable=False, server_default=""),
        # [{state, entered_at_ms, left_at_ms}], in the order the run went through them.
        sa.Column("states", postgresql.JSONB, nullable=False, server_default=_EMPTY_LIST),
        sa.Column("route", sa.Text, nullable=False, server_default=""),
        sa.Column("plugins_used", postgresql.JSONB, nullable=False, server_default=_EMPTY_LIST),
        sa.Column("redaction_level", sa.Text, nullable=False, server_default=""),
        sa.Column("model_calls", postgresql.JSONB, nullable=False, server_default=_EMPTY_LIST),
        sa.Column("tokens_in", sa.Integer, nullable=False, server_default="0"),
        sa.Column("tokens_out", sa.Integer, nullable=False, server_default="0"),
        sa.Column("cost_estimate", sa.Float, nullable=False, server_default="0"),
        sa.Column("decision", sa.Text, nullable=False, server_default=""),
        # Why the run went as it did: deferral reasons, refusals, capture outcomes (no content).
        sa.Column("notes", postgresql.JSONB, nullable=False, server_default=_EMPTY_LIST),
        sa.Column("notification_id", sa.Text, nullable=False, server_default=""),
        sa.Column("next_wakeup_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_pipeline_runs_created_at", "pipeline_runs", ["created_at"])
    op.create_table(
        "pipeline_notifications",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("channel", sa.Text, nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("body", sa.Text, nullable=False, server_default=""),
        sa.Column("source_summary", sa.Text, nullable=False, server_default=""),
        sa.Column("source_key", sa.Text, nullable=False, server_default=""),
        sa.Column("actions", postgresql.JSONB, nullable=False, server_default=_EMPTY_LIST),
        sa.Column("run_id", sa.Text, nullable=False, server_default=""),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_pipeline_notifications_created_at", "pipeline_notifications", ["created_at"])
    op.create_table(
        "pipeline_source_controls",
        sa.Column("source_key", sa.Text, primary_key=True),
        sa.Column("snoozed_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("disabled", sa.Boolean, nullable=False, server_default=sa.false()),
        # The notification whose snooze/disable entry point set this, if any.
        sa.Column("notification_id", sa.Text, nullable=False, server_default=""),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("pipeline_source_controls")
    op.drop_table("pipeline_notifications")
    op.drop_table("pipeline_runs")
    op.drop_table("pipeline_plugins")
