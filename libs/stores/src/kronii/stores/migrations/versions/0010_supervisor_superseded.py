"""A runtime the fallback chain replaced is `superseded`, not `offline`: it still runs (left on
screen, never killed) but the agent's triggers go to the fresh session that replaced it. 0003
allowed only active, idle and offline in `supervisor_runtimes.status`; the list below is the core's
`RuntimeStatus` enum, frozen here as a migration must be.

Revision ID: 0010_supervisor_superseded
Revises: 0009_supervisor_results
"""

from __future__ import annotations

from alembic import op

revision = "0010_supervisor_superseded"
down_revision = "0009_supervisor_results"
branch_labels = None
depends_on = None

# kronii.supervisor.core.model.RuntimeStatus.
STATUSES = ("active", "idle", "superseded", "offline")
_OLD_STATUSES = ("active", "idle", "offline")


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(value) for value in values)})"


def upgrade() -> None:
    op.drop_constraint("status_known", "supervisor_runtimes", type_="check")
    op.create_check_constraint("status_known", "supervisor_runtimes", _in("status", STATUSES))


def downgrade() -> None:
    # 0003's list cannot hold a superseded runtime: it goes back as offline, with its reason kept.
    op.execute("UPDATE supervisor_runtimes SET status = 'offline' WHERE status = 'superseded'")
    op.drop_constraint("status_known", "supervisor_runtimes", type_="check")
    op.create_check_constraint("status_known", "supervisor_runtimes", _in("status", _OLD_STATUSES))
