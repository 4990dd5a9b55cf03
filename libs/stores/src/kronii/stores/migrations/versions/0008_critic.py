"""The console critic's long memory tier (seed 003, "Index / Store"): one row per InvocationRecord,
its unit embedding in a pgvector column with an HNSW cosine index, and indexes for the predicate
queries (newest first, by command, by trigger, failures). Needs the `vector` extension: the
embedded PostgreSQL ships it; another server needs pgvector installed.

Revision ID: 0008_critic
Revises: 0007_broker
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_critic"
down_revision = "0007_broker"
branch_labels = None
depends_on = None

EMBEDDING_DIM = 384  # all-MiniLM-L6-v2; kronii.critic.core.model.EMBEDDING_DIM


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.create_table(
        "critic_records",
        sa.Column("record_id", sa.Text, primary_key=True),
        sa.Column("timestamp_ms", sa.BigInteger, nullable=False),
        sa.Column("trigger", sa.Text, nullable=False),
        sa.Column("command_name", sa.Text, nullable=False, server_default=""),
        sa.Column("command_line", sa.Text, nullable=False),
        sa.Column("cwd", sa.Text, nullable=False, server_default=""),
        sa.Column("exit_status", sa.Integer, nullable=False),
        sa.Column("duration_ms", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("shell", sa.Text, nullable=False, server_default=""),
        sa.Column("session", sa.Text, nullable=False, server_default=""),
        sa.Column("error_type", sa.Text, nullable=False, server_default=""),
        sa.Column("error_message", sa.Text, nullable=False, server_default=""),
        sa.Column("summary", sa.Text, nullable=False, server_default=""),
        sa.Column("redactions", sa.Integer, nullable=False, server_default="0"),
    )
    # kronii-stores does not depend on pgvector's Python package, so the column is added in SQL. NULL
    # until the model has run (or without a model): such rows are found by predicates only.
    op.execute(f"ALTER TABLE critic_records ADD COLUMN embedding vector({EMBEDDING_DIM}) NULL")
    op.execute(
        "CREATE INDEX ix_critic_records_embedding ON critic_records USING hnsw (embedding vector_cosine_ops)"
    )
    op.create_index("ix_critic_records_timestamp", "critic_records", ["timestamp_ms"])
    op.create_index("ix_critic_records_command", "critic_records", ["command_name", "timestamp_ms"])
    op.create_index("ix_critic_records_trigger", "critic_records", ["trigger", "timestamp_ms"])
    op.create_index(
        "ix_critic_records_failed",
        "critic_records",
        ["timestamp_ms"],
        postgresql_where=sa.text("exit_status <> 0"),
    )


def downgrade() -> None:
    op.drop_table("critic_records")
    # The extension stays: another database object may use it, and dropping it needs ownership.
