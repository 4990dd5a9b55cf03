"""The runtime registry of section 8.2 in PostgreSQL, with a write-through cache: the supervisor
is the registry's only writer, so a trigger resolves its runtime without a database round trip."""

from __future__ import annotations

import asyncio
from dataclasses import asdict, replace
from datetime import UTC, datetime
from typing import Any

from kronii.supervisor.adapters.tables import runtimes
from kronii.supervisor.core.model import RuntimeRecord, RuntimeStatus
from kronii.supervisor.core.runtime_index import RuntimeIndex
from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = ["Registry"]


def _dt(at: float | None) -> datetime | None:
    return None if at is None else datetime.fromtimestamp(at, UTC)


def _ts(at: datetime | None) -> float | None:
    return None if at is None else at.timestamp()


def _row(record: RuntimeRecord) -> dict[str, Any]:
    data = asdict(record)
    data["status"] = record.status.value
    data["command"] = list(record.command)
    for key in ("registered_at", "last_heartbeat_at", "last_activity_at"):
        data[key] = _dt(data[key])
    return data


def _record(row: Any) -> RuntimeRecord:
    columns = row._mapping
    return RuntimeRecord(
        runtime_id=columns["runtime_id"],
        agent_id=columns["agent_id"],
        workspace_id=columns["workspace_id"],
        pty_target=columns["pty_target"],
        registered_at=_ts(columns["registered_at"]) or 0.0,
        session_id=columns["session_id"],
        pty_backend=columns["pty_backend"],
        pid=columns["pid"],
        status=RuntimeStatus(columns["status"]),
        kind=columns["kind"],
        role=columns["role"],
        managed=columns["managed"],
        paused=columns["paused"],
        operator_busy=columns["operator_busy"],
        command=tuple(columns["command"] or ()),
        last_heartbeat_at=_ts(columns["last_heartbeat_at"]),
        last_activity_at=_ts(columns["last_activity_at"]),
        offline_reason=columns["offline_reason"],
        cwd=columns["cwd"],
    )


class Registry(RuntimeIndex):
    """Reads answer from the records in memory (RuntimeIndex); writes go to PostgreSQL first."""

    def __init__(self, engine: AsyncEngine) -> None:
        super().__init__()
        self._engine = engine
        self._lock = asyncio.Lock()

    async def load(self) -> None:
        async with self._engine.connect() as conn:
            rows = (await conn.execute(select(runtimes))).all()
        self._records = {record.runtime_id: record for record in map(_record, rows)}

    async def add(self, record: RuntimeRecord) -> RuntimeRecord:
        async with self._lock:
            async with self._engine.begin() as conn:
                await conn.execute(insert(runtimes), [_row(record)])
            self._records[record.runtime_id] = record
        return record

    async def change(self, runtime_id: str, **fields: Any) -> RuntimeRecord:
        async with self._lock:
            current = self._records.get(runtime_id)
            if current is None:
                raise KeyError(runtime_id)
            new = replace(current, **fields)
            if new == current:
                return current
            values = {k: v for k, v in _row(new).items() if k in fields}
            async with self._engine.begin() as conn:
                await conn.execute(
                    update(runtimes).where(runtimes.c.runtime_id == runtime_id).values(**values)
                )
            self._records[runtime_id] = new
            return new
