"""Threads for the activation orchestrator (seed 002, section 8.4): a thread per workspace and id
with its guard (section 14), its messages in order, a read cursor per participant; and the critic's
offers of a repeated failure to an agent, kept until the person's yes.

Revision ID: 0011_supervisor_threads
Revises: 0010_supervisor_superseded
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0011_supervisor_threads"
down_revision = "0010_supervisor_superseded"
branch_labels = None
depends_on = None

# kronii.supervisor.core.threads.MessageKind, frozen here as a migration must be.
KINDS = ("message", "result", "finding", "resolved", "handoff", "outcome", "sync", "blocked")
_AT = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "supervisor_threads",
        sa.Column("workspace_id", sa.Text, nullable=False),
        sa.Column("thread_id", sa.Text, nullable=False),
        sa.Column("last_seq", sa.BigInteger, nullable=False),
        sa.Column("created_at", _AT, nullable=False),
        sa.Column("updated_at", _AT, nullable=False),
        sa.Column("turns_without_progress", sa.Integer, nullable=False),
        sa.Column("finding_key", sa.Text, nullable=False),
        sa.Column("finding_repeats", sa.Integer, nullable=False),
        sa.Column("blocked", sa.Boolean, nullable=False),
        sa.Column("blocked_reason", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("workspace_id", "thread_id", name="supervisor_threads_pkey"),
    )
    op.create_index("ix_supervisor_threads_updated", "supervisor_threads", ["updated_at"])
    _messages_and_cursors()
    _offers()


def _messages_and_cursors() -> None:
    kinds = ", ".join(repr(kind) for kind in KINDS)
    op.create_table(
        "supervisor_thread_messages",
        sa.Column("workspace_id", sa.Text, nullable=False),
        sa.Column("thread_id", sa.Text, nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("author", sa.Text, nullable=False),
        sa.Column("recipients", JSONB, nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("finding_key", sa.Text, nullable=False),
        sa.Column("dedupe_key", sa.Text, nullable=False),
        sa.Column("at", _AT, nullable=False),
        sa.PrimaryKeyConstraint("workspace_id", "thread_id", "seq", name="supervisor_thread_messages_pkey"),
        sa.CheckConstraint(f"kind IN ({kinds})", name="kind_known"),
    )
    op.create_index(
        "ux_supervisor_thread_messages_dedupe",
        "supervisor_thread_messages",
        ["workspace_id", "thread_id", "dedupe_key"],
        unique=True,
        postgresql_where=sa.text("dedupe_key <> ''"),
    )
    op.create_table(
        "supervisor_thread_cursors",
        sa.Column("workspace_id", sa.Text, nullable=False),
        sa.Column("thread_id", sa.Text, nullable=False),
        sa.Column("participant", sa.Text, nullable=False),
        sa.Column("cursor", sa.BigInteger, nullable=False),
        sa.Column("seen_at", _AT),
        sa.PrimaryKeyConstraint(
            "workspace_id", "thread_id", "participant", name="supervisor_thread_cursors_pkey"
        ),
    )


def _offers() -> None:
    op.create_table(
        "supervisor_failure_offers",
        sa.Column("offer_id", sa.Text, primary_key=True),
        sa.Column("workspace_id", sa.Text, nullable=False),
        sa.Column("agent_id", sa.Text, nullable=False),
        sa.Column("failure_key", sa.Text, nullable=False),
        sa.Column("command_line", sa.Text, nullable=False),
        sa.Column("exit_code", sa.Integer, nullable=False),
        sa.Column("error_text", sa.Text, nullable=False),
        sa.Column("cwd", sa.Text, nullable=False),
        sa.Column("times", sa.Integer, nullable=False),
        sa.Column("offered_at", _AT, nullable=False),
        sa.Column("accepted_at", _AT),
        sa.Column("thread_id", sa.Text, nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_supervisor_failure_offers_offered", "supervisor_failure_offers", ["offered_at"])


def downgrade() -> None:
    op.drop_table("supervisor_failure_offers")
    op.drop_table("supervisor_thread_cursors")
    op.drop_index("ux_supervisor_thread_messages_dedupe", table_name="supervisor_thread_messages")
    op.drop_table("supervisor_thread_messages")
    op.drop_table("supervisor_threads")
