"""The supervisor keeps each runtime's working directory (resume and spawn run there, and the
agent's session files are matched by it) and a sentence saying why each trigger ended as it did.

Revision ID: 0006_supervisor_cwd
Revises: 0005_pipeline
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_supervisor_cwd"
down_revision = "0005_pipeline"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("supervisor_runtimes", sa.Column("cwd", sa.Text, nullable=False, server_default=""))
    op.add_column("supervisor_triggers", sa.Column("detail", sa.Text, nullable=False, server_default=""))


def downgrade() -> None:
    op.drop_column("supervisor_triggers", "detail")
    op.drop_column("supervisor_runtimes", "cwd")
