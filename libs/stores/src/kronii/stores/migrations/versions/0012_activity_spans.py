"""Activity history: the sensor's focus and state spans, merged as ActivityWatch merges identical
heartbeats, kept for activity_retention_days; spans brought in by an import carry their key.

Revision ID: 0012_activity_spans
Revises: 0011_supervisor_threads
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012_activity_spans"
down_revision = "0011_supervisor_threads"
branch_labels = None
depends_on = None

_AT = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "activity_spans",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("started_at", _AT, nullable=False),
        sa.Column("ended_at", _AT, nullable=False),
        sa.Column("app", sa.Text, nullable=True),
        sa.Column("title", sa.Text, nullable=True),
        sa.Column("window_id", sa.BigInteger, nullable=True),
        sa.Column("wm_class", sa.Text, nullable=True),
        sa.Column("state", sa.Text, nullable=True),
        sa.Column("import_key", sa.Text, nullable=True),
        sa.CheckConstraint("kind IN ('focus', 'state')", name="activity_spans_kind_known"),
    )
    op.create_index("ix_activity_spans_started_at", "activity_spans", ["started_at"])
    op.create_index("ix_activity_spans_app_started_at", "activity_spans", ["app", "started_at"])
    op.create_index(
        "ux_activity_spans_import_key",
        "activity_spans",
        ["import_key"],
        unique=True,
        postgresql_where=sa.text("import_key IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_table("activity_spans")
