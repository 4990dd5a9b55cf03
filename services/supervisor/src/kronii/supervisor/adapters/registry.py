"""The runtime registry of section 8.2 in PostgreSQL, with a write-through cache: the supervisor
is the registry's only writer, so a trigger resolves its runtime without a database round trip."""

from __future__ import annotations

import asyncio
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from kronii.supervisor.core.model import RuntimeStatus
from kronii.supervisor.store import runtimes
from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = ["Registry", "RuntimeRecord"]


def _dt(at: float | None) -> datetime | None:
    return None if at is None else datetime.fromtimestamp(at, UTC)


def _ts(at: datetime | None) -> float | None:
    return None if at is None else at.timestamp()


@dataclass(frozen=True, slots=True)
class RuntimeRecord:
    runtime_id: str
    agent_id: str
    workspace_id: str
    pty_target: str
    registered_at: float
    session_id: str = ""
    pty_backend: str = "tmux"
    pid: int = 0
    status: RuntimeStatus = RuntimeStatus.IDLE
    kind: str = "generic"
    role: str = ""
    managed: bool = False
    paused: bool = False
    operator_busy: bool = False
    command: tuple[str, ...] = field(default_factory=tuple)
    last_heartbeat_at: float | None = None
    last_activity_at: float | None = None
    offline_reason: str = ""
    cwd: str = ""

    def row(self) -> dict[str, Any]:
        data = asdict(self)
        data["status"] = self.status.value
        data["command"] = list(self.command)
        for key in ("registered_at", "last_heartbeat_at", "last_activity_at"):
            data[key] = _dt(data[key])
        return data

    @classmethod
    def from_row(cls, row: Any) -> RuntimeRecord:
        m = row._mapping
        return cls(
            runtime_id=m["runtime_id"],
            agent_id=m["agent_id"],
            workspace_id=m["workspace_id"],
            pty_target=m["pty_target"],
            registered_at=_ts(m["registered_at"]) or 0.0,
            session_id=m["session_id"],
            pty_backend=m["pty_backend"],
            pid=m["pid"],
            status=RuntimeStatus(m["status"]),
            kind=m["kind"],
            role=m["role"],
            managed=m["managed"],
            paused=m["paused"],
            operator_busy=m["operator_busy"],
            command=tuple(m["command"] or ()),
            last_heartbeat_at=_ts(m["last_heartbeat_at"]),
            last_activity_at=_ts(m["last_activity_at"]),
            offline_reason=m["offline_reason"],
            cwd=m["cwd"],
        )


class Registry:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._cache: dict[str, RuntimeRecord] = {}
        self._lock = asyncio.Lock()

    async def load(self) -> None:
        async with self._engine.connect() as conn:
            rows = (await conn.execute(select(runtimes))).all()
        self._cache = {record.runtime_id: record for record in map(RuntimeRecord.from_row, rows)}

    async def add(self, record: RuntimeRecord) -> RuntimeRecord:
        async with self._lock:
            async with self._engine.begin() as conn:
                await conn.execute(insert(runtimes), [record.row()])
            self._cache[record.runtime_id] = record
        return record

    async def change(self, runtime_id: str, **fields: Any) -> RuntimeRecord:
        async with self._lock:
            current = self._cache.get(runtime_id)
            if current is None:
                raise KeyError(runtime_id)
            new = replace(current, **fields)
            if new == current:
                return current
            values = {k: v for k, v in new.row().items() if k in fields}
            async with self._engine.begin() as conn:
                await conn.execute(
                    update(runtimes).where(runtimes.c.runtime_id == runtime_id).values(**values)
                )
            self._cache[runtime_id] = new
            return new

    def get(self, runtime_id: str) -> RuntimeRecord | None:
        return self._cache.get(runtime_id)

    def all(self) -> list[RuntimeRecord]:
        return sorted(self._cache.values(), key=lambda r: r.registered_at)

    def query(
        self, *, workspace_id: str = "", agent_id: str = "", include_offline: bool = False
    ) -> list[RuntimeRecord]:
        return [
            r
            for r in self.all()
            if (not workspace_id or r.workspace_id == workspace_id)
            and (not agent_id or r.agent_id == agent_id)
            and (include_offline or r.status is not RuntimeStatus.OFFLINE)
        ]

    def for_agent(self, workspace_id: str, agent_id: str) -> RuntimeRecord | None:
        """The runtime a trigger for this agent goes to: the newest live one, else the newest of
        any status (its kind and session id still tell the fallback chain what to do)."""
        candidates = self.query(workspace_id=workspace_id, agent_id=agent_id, include_offline=True)
        live = [r for r in candidates if r.status is not RuntimeStatus.OFFLINE]
        pool = live or candidates
        return pool[-1] if pool else None
