"""Activity envelopes persisted by the sensor (never raw input while locked).

Revision ID: 0002_activity_events
Revises: 0001_audit_log
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0002_activity_events"
down_revision = "0001_audit_log"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "activity_events",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("state", sa.Text, nullable=False),
        sa.Column("detail", postgresql.JSONB, nullable=False, server_default=sa.text("'{}'::jsonb")),
    )
    op.create_index("ix_activity_events_at", "activity_events", ["at"])


def downgrade() -> None:
    op.drop_table("activity_events")
