"""A trigger's steps (supervisor_trigger_attempts), written in batches behind the answer so the
delivery path never waits on PostgreSQL; and a finished trigger's row, read back."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import UTC, datetime
from typing import Any

from kronii.supervisor.adapters.tables import trigger_attempts, triggers
from kronii.supervisor.core.trigger import TriggerOutcome, TriggerQuery
from sqlalchemy import RowMapping, insert, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = ["TriggerRows"]

log = logging.getLogger(__name__)


class TriggerRows:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._writes: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue(maxsize=20_000)

    def attempt(self, trigger_id: str, step: str, outcome: str, **detail: Any) -> None:
        self._queue_write(
            "attempt",
            {
                "trigger_id": trigger_id,
                "at": datetime.now(UTC),
                "step": step,
                "outcome": outcome,
                "detail": detail,
            },
        )

    async def find(self, trigger_id: str) -> TriggerOutcome | None:
        """The stored outcome of a trigger whose Redis record has expired (None when unknown)."""
        async with self._engine.connect() as conn:
            row = (await conn.execute(select(triggers).where(triggers.c.trigger_id == trigger_id))).first()
        return None if row is None else _outcome(row._mapping)

    async def recent(self, query: TriggerQuery, workspaces: frozenset[str] | None) -> list[TriggerOutcome]:
        """The rows the query names, the most recently changed first; `workspaces` None: any."""
        statement = select(triggers).order_by(triggers.c.updated_at.desc()).limit(query.limit)
        for column, value in (
            (triggers.c.workspace_id, query.workspace_id),
            (triggers.c.agent_id, query.agent_id),
            (triggers.c.runtime_id, query.runtime_id),
            (triggers.c.result, query.result),
        ):
            if value:
                statement = statement.where(column == value)
        if workspaces is not None:
            statement = statement.where(triggers.c.workspace_id.in_(sorted(workspaces)))
        async with self._engine.connect() as conn:
            rows = (await conn.execute(statement)).all()
        return [_outcome(row._mapping) for row in rows]

    def _queue_write(self, kind: str, fields: dict[str, Any]) -> None:
        try:
            self._writes.put_nowait((kind, fields))
        except asyncio.QueueFull:
            log.warning("the database writer is behind; dropping a %s row", kind)

    async def write_forever(self) -> None:
        while True:
            batch = [await self._writes.get()]
            while not self._writes.empty() and len(batch) < 200:
                batch.append(self._writes.get_nowait())
            await self._write(batch)

    async def drain(self) -> None:
        batch: list[tuple[str, dict[str, Any]]] = []
        while not self._writes.empty():
            batch.append(self._writes.get_nowait())
        if batch:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._write(batch), 1.5)

    async def _write(self, batch: list[tuple[str, dict[str, Any]]]) -> None:
        attempts = [f for k, f in batch if k == "attempt"]
        rows = {f["trigger_id"]: f for k, f in batch if k == "trigger"}
        try:
            async with self._engine.begin() as conn:
                if attempts:
                    await conn.execute(insert(trigger_attempts), attempts)
                for row in rows.values():
                    stmt = pg_insert(triggers).values(**row)
                    update = {k: stmt.excluded[k] for k in row if k not in ("trigger_id", "created_at")}
                    await conn.execute(stmt.on_conflict_do_update(index_elements=["trigger_id"], set_=update))
        except Exception as error:
            log.warning("persisting %d supervisor rows failed: %s", len(batch), error)


def _stamp(value: datetime | None) -> float | None:
    return value.timestamp() if value else None


def _outcome(columns: RowMapping) -> TriggerOutcome:
    return TriggerOutcome(
        trigger_id=columns["trigger_id"],
        result=columns["result"],
        delivery_backend=columns["delivery_backend"],
        error_code=columns["error_code"],
        runtime_id=columns["runtime_id"],
        fallback_chain=tuple(columns["fallback_chain"] or ()),
        agent_id=columns["agent_id"],
        workspace_id=columns["workspace_id"],
        thread_id=columns["thread_id"],
        delivered_at=_stamp(columns["delivered_at"]),
        deferred_until=_stamp(columns["deferred_until"]),
        detail=columns["detail"],
        created_at=_stamp(columns["created_at"]),
        updated_at=_stamp(columns["updated_at"]),
    )
