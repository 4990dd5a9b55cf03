"""The capture service: jobs, encrypted objects (metadata and wrapped content keys; the image
bytes live sealed in files under random ids) and registered agent clients (seed 000,
"ScreenCapture plugin" and "Security model for screenshots").

Revision ID: 0004_capture
Revises: 0003_supervisor_registry
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0004_capture"
down_revision = "0003_supervisor_registry"
branch_labels = None
depends_on = None


def upgrade() -> None:
    _create_capture_jobs()
    _create_capture_objects()
    _create_capture_clients()


def _create_capture_jobs() -> None:
    op.create_table(
        "capture_jobs",
        sa.Column("job_id", sa.Text, primary_key=True),
        sa.Column("requester", sa.Text, nullable=False),
        sa.Column("merge_key", sa.Text, nullable=False, server_default=""),
        sa.Column("spec", postgresql.JSONB, nullable=False, server_default=sa.text("'{}'::jsonb")),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("reason", sa.Text, nullable=False, server_default=""),
        sa.Column("history", postgresql.JSONB, nullable=False, server_default=sa.text("'[]'::jsonb")),
        sa.Column("primary_screenshot_id", sa.Text, nullable=True),
        sa.Column("meta", postgresql.JSONB, nullable=False, server_default=sa.text("'{}'::jsonb")),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("deadline_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "status IN ('queued', 'waiting', 'capturing', 'scoring', 'redacting', 'persisted', "
            "'expired', 'rejected', 'failed', 'cancelled')",
            name="status_known",
        ),
    )
    op.create_index("ix_capture_jobs_created", "capture_jobs", ["created_at"])
    op.create_index("ix_capture_jobs_merge_key", "capture_jobs", ["merge_key", "created_at"])


def _create_capture_objects() -> None:
    op.create_table(
        "capture_objects",
        sa.Column("object_id", sa.Text, primary_key=True),
        sa.Column("job_id", sa.Text, nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("width", sa.Integer, nullable=False),
        sa.Column("height", sa.Integer, nullable=False),
        sa.Column("score", sa.Float, nullable=False, server_default="0"),
        sa.Column("redaction_level", sa.Text, nullable=False, server_default=""),
        sa.Column("masked_fraction", sa.Float, nullable=False, server_default="0"),
        sa.Column("provider", sa.Text, nullable=False),
        sa.Column("key_version", sa.Integer, nullable=False),
        # NULL once purged: without its content key a leftover copy of the file cannot be opened.
        sa.Column("wrapped_key", sa.LargeBinary, nullable=True),
        sa.Column("size_bytes", sa.BigInteger, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("purged_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("kind IN ('raw', 'redacted')", name="kind_known"),
    )
    op.create_index("ix_capture_objects_job", "capture_objects", ["job_id"])
    op.create_index(
        "ix_capture_objects_live_expiry",
        "capture_objects",
        ["expires_at"],
        postgresql_where=sa.text("purged_at IS NULL"),
    )


def _create_capture_clients() -> None:
    op.create_table(
        "capture_clients",
        sa.Column("client_id", sa.Text, primary_key=True),
        sa.Column("public_key", sa.LargeBinary, nullable=False),
        sa.Column(
            "capabilities",
            postgresql.ARRAY(sa.Text),
            nullable=False,
            server_default=sa.text("'{}'::text[]"),
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("octet_length(public_key) = 32", name="ed25519_key_length"),
    )


def downgrade() -> None:
    op.drop_table("capture_clients")
    op.drop_table("capture_objects")
    op.drop_table("capture_jobs")
