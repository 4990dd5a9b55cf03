"""Every pipeline run, as GET /v1/runs and /v1/runs/{run_id} show it (api/runs.py): its path through the states with
timings, route, plugins used, redaction level, model calls and their cost, decision, and the next
wake-up it planned. The core builds a RunRecord; save() writes it whole (again as it progresses)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kronii.common.llm.protocol import CallRecord
from kronii.pipeline.adapters.tables import as_datetime, as_epoch, runs
from kronii.pipeline.ports import MAX_RUNS_PAGE
from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = ["RunRecord", "RunStore", "StateVisit"]


@dataclass(frozen=True, slots=True)
class StateVisit:
    """One stay in a state; epoch milliseconds, `left_at_ms` None while the run is still there."""

    state: str
    entered_at_ms: int
    left_at_ms: int | None = None

    @property
    def duration_ms(self) -> int | None:
        return None if self.left_at_ms is None else self.left_at_ms - self.entered_at_ms

    def as_dict(self) -> dict[str, Any]:
        return {"state": self.state, "entered_at_ms": self.entered_at_ms, "left_at_ms": self.left_at_ms}


@dataclass(frozen=True, slots=True)
class RunRecord:
    run_id: str
    created_at: float
    trigger_summary: str = ""
    states: tuple[StateVisit, ...] = ()
    route: str = ""
    plugins_used: tuple[str, ...] = ()
    redaction_level: str = ""
    model_calls: tuple[CallRecord, ...] = ()
    decision: str = ""
    notes: tuple[str, ...] = ()
    notification_id: str = ""
    next_wakeup_at: float | None = None
    finished_at: float | None = None
    extra_cost: float = field(default=0.0, compare=False)

    @property
    def tokens_in(self) -> int:
        return sum(call.input_tokens for call in self.model_calls)

    @property
    def tokens_out(self) -> int:
        return sum(call.output_tokens for call in self.model_calls)

    @property
    def cost_estimate(self) -> float:
        return sum(call.cost_estimate for call in self.model_calls) + self.extra_cost

    def row(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "trigger_summary": self.trigger_summary,
            "states": [visit.as_dict() for visit in self.states],
            "route": self.route,
            "plugins_used": list(self.plugins_used),
            "redaction_level": self.redaction_level,
            "model_calls": [call.as_dict() for call in self.model_calls],
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cost_estimate": self.cost_estimate,
            "decision": self.decision,
            "notes": list(self.notes),
            "notification_id": self.notification_id,
            "next_wakeup_at": as_datetime(self.next_wakeup_at),
            "created_at": as_datetime(self.created_at),
            "finished_at": as_datetime(self.finished_at),
        }

    def as_json(self) -> dict[str, Any]:
        data = self.row()
        data.update(
            created_at=self.created_at,
            finished_at=self.finished_at,
            next_wakeup_at=self.next_wakeup_at,
            duration_ms=None
            if self.finished_at is None
            else round((self.finished_at - self.created_at) * 1000),
        )
        return data

    @classmethod
    def from_row(cls, row: Any) -> RunRecord:
        m = row._mapping
        calls = tuple(CallRecord.from_dict(call) for call in m["model_calls"] or ())
        call_cost = sum(call.cost_estimate for call in calls)
        return cls(
            run_id=m["run_id"],
            created_at=as_epoch(m["created_at"]) or 0.0,
            trigger_summary=m["trigger_summary"],
            states=tuple(
                StateVisit(v["state"], int(v["entered_at_ms"]), v.get("left_at_ms"))
                for v in m["states"] or ()
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
        row = record.row()
        changes = {key: value for key, value in row.items() if key not in ("run_id", "created_at")}
        statement = (
            insert(runs).values(**row).on_conflict_do_update(index_elements=[runs.c.run_id], set_=changes)
        )
        async with self._engine.begin() as conn:
            await conn.execute(statement)

    async def get(self, run_id: str) -> RunRecord | None:
        async with self._engine.connect() as conn:
            row = (await conn.execute(select(runs).where(runs.c.run_id == run_id))).one_or_none()
        return None if row is None else RunRecord.from_row(row)

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
        return [RunRecord.from_row(row) for row in rows]
