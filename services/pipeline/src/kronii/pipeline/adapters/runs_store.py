"""Every pipeline run in PostgreSQL (`pipeline_runs`), as GET /v1/runs and /v1/runs/{run_id} show it:
a round builds its `core.runs.RunRecord`; save() writes it whole (again as it progresses)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kronii.llm.protocol import CallRecord
from kronii.pipeline.adapters.tables import as_datetime, as_epoch, notifications, runs
from kronii.pipeline.core.runs import MAX_RUNS_PAGE, RunRecord, StateVisit
from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = ["RunStore", "record_from_row", "record_row"]


def _visit(visit: StateVisit) -> dict[str, Any]:
    return {"state": visit.state, "entered_at_ms": visit.entered_at_ms, "left_at_ms": visit.left_at_ms}


def record_row(record: RunRecord) -> dict[str, Any]:
    """The run as its row in `pipeline_runs`."""
    return {
        "run_id": record.run_id,
        "trigger_summary": record.trigger_summary,
        "states": [_visit(visit) for visit in record.states],
        "route": record.route,
        "plugins_used": list(record.plugins_used),
        "redaction_level": record.redaction_level,
        "model_calls": [call.as_dict() for call in record.model_calls],
        "tokens_in": record.tokens_in,
        "tokens_out": record.tokens_out,
        "cost_estimate": record.cost_estimate,
        "decision": record.decision,
        "notes": list(record.notes),
        "notification_id": record.notification_id,
        "next_wakeup_at": as_datetime(record.next_wakeup_at),
        "created_at": as_datetime(record.created_at),
        "finished_at": as_datetime(record.finished_at),
    }


def record_from_row(row: Any) -> RunRecord:
    m = row._mapping
    calls = tuple(CallRecord.from_dict(call) for call in m["model_calls"] or ())
    call_cost = sum(call.cost_estimate for call in calls)
    return RunRecord(
        run_id=m["run_id"],
        created_at=as_epoch(m["created_at"]) or 0.0,
        trigger_summary=m["trigger_summary"],
        states=tuple(
            StateVisit(v["state"], int(v["entered_at_ms"]), v.get("left_at_ms")) for v in m["states"] or ()
        ),
        route=m["route"],
        plugins_used=tuple(m["plugins_used"] or ()),
        redaction_level=m["redaction_level"],
        model_calls=calls,
        decision=m["decision"],
        notes=tuple(m["notes"] or ()),
        notification_id=m["notification_id"],
        next_wakeup_at=as_epoch(m["next_wakeup_at"]),
        finished_at=as_epoch(m["finished_at"]),
        extra_cost=max(0.0, m["cost_estimate"] - call_cost),
    )


class RunStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def save(self, record: RunRecord) -> None:
        """Insert the run, or replace what is stored for its run_id."""
        row = record_row(record)
        changes = {key: value for key, value in row.items() if key not in ("run_id", "created_at")}
        statement = (
            insert(runs).values(**row).on_conflict_do_update(index_elements=[runs.c.run_id], set_=changes)
        )
        async with self._engine.begin() as conn:
            await conn.execute(statement)

    async def get(self, run_id: str) -> RunRecord | None:
        async with self._engine.connect() as conn:
            row = (await conn.execute(select(runs).where(runs.c.run_id == run_id))).one_or_none()
        return None if row is None else record_from_row(row)

    async def list(
        self, *, limit: int = 50, before: float | None = None, decision: str = ""
    ) -> Sequence[RunRecord]:
        """Newest first; `before` (epoch seconds, exclusive) pages back through older runs."""
        if not 1 <= limit <= MAX_RUNS_PAGE:
            raise ValueError(f"limit must be between 1 and {MAX_RUNS_PAGE}")
        statement = select(runs).order_by(runs.c.created_at.desc(), runs.c.run_id.desc()).limit(limit)
        if before is not None:
            statement = statement.where(runs.c.created_at < as_datetime(before))
        if decision:
            statement = statement.where(runs.c.decision == decision)
        async with self._engine.connect() as conn:
            rows = (await conn.execute(statement)).all()
        return [record_from_row(row) for row in rows]

    async def forget(self, since: float | None, until: float | None) -> tuple[int, int]:
        """Delete the runs made in [since, until) and the notifications sent then (every one of both
        with no range): (runs deleted, notifications deleted), in one transaction."""
        run_rows, note_rows = delete(runs), delete(notifications)
        if since is not None and until is not None:
            start, end = as_datetime(since), as_datetime(until)
            run_rows = run_rows.where(runs.c.created_at >= start, runs.c.created_at < end)
            note_rows = note_rows.where(notifications.c.created_at >= start, notifications.c.created_at < end)
        async with self._engine.begin() as conn:
            forgotten_runs = (await conn.execute(run_rows)).rowcount
            forgotten_notes = (await conn.execute(note_rows)).rowcount
        return int(forgotten_runs or 0), int(forgotten_notes or 0)
