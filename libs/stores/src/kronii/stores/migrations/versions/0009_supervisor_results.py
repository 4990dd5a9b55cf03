"""The supervisor's trigger records take every outcome its lifecycle table can end on.

0003 allowed five results, but the table (kronii.supervisor.core.table) also ends a trigger as
`typed_not_submitted` (the prompt sits in the agent's input box and the submit key did not send
it): writing that record broke the constraint and the caller got a 500 for a trigger that had run.
The result list below is the core's `Result` enum; the delivery backend, unchecked until now, gets
the core's `Backend` values ("" when nothing carried the prompt). A test writes a record for every
row of the table through the real store, and checks these lists against the enums.

Revision ID: 0009_supervisor_results
Revises: 0008_critic
"""

from __future__ import annotations

from alembic import op

revision = "0009_supervisor_results"
down_revision = "0008_critic"
branch_labels = None
depends_on = None

# kronii.supervisor.core.model.Result and Backend, frozen here as a migration must be.
RESULTS = ("delivered", "already_active", "deferred", "timeout", "failed", "typed_not_submitted")
BACKENDS = ("", "tmux", "resume", "spawn")
_OLD_RESULTS = ("delivered", "already_active", "deferred", "timeout", "failed")


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(value) for value in values)})"


def upgrade() -> None:
    op.drop_constraint("result_known", "supervisor_triggers", type_="check")
    op.create_check_constraint("result_known", "supervisor_triggers", _in("result", RESULTS))
    # NOT VALID: rows written before are not re-read (only the supervisor ever wrote this column,
    # always with these values); every new or updated row is checked.
    check = _in("delivery_backend", BACKENDS)
    op.execute(
        f"ALTER TABLE supervisor_triggers ADD CONSTRAINT delivery_backend_known CHECK ({check}) NOT VALID"
    )


def downgrade() -> None:
    op.drop_constraint("delivery_backend_known", "supervisor_triggers", type_="check")
    # The old constraint cannot hold the newer results: they go back as what 0003 called them.
    op.execute("UPDATE supervisor_triggers SET result = 'failed' WHERE result = 'typed_not_submitted'")
    op.drop_constraint("result_known", "supervisor_triggers", type_="check")
    op.create_check_constraint("result_known", "supervisor_triggers", _in("result", _OLD_RESULTS))
