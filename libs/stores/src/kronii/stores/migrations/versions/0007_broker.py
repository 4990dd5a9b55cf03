"""The input broker's registered agents (Ed25519 public keys), the same shape as capture's clients:
agents sign in to the broker with their own key, registered with `kronii broker clients add`.

Revision ID: 0007_broker
Revises: 0006_supervisor_cwd
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0007_broker"
down_revision = "0006_supervisor_cwd"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "broker_clients",
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
        sa.CheckConstraint("octet_length(public_key) = 32", name="broker_ed25519_key_length"),
    )


def downgrade() -> None:
    op.drop_table("broker_clients")
