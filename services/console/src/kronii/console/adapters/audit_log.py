"""The audit log and the tables' sizes for the Privacy page, on the console's PostgreSQL engine:
the chain's last rows and its verification, and rows and bytes on disk of the tables that keep the
person's data (AuditChain, StoreSizes). Only table names from the console's own list are ever put
into SQL.

The chain is verified as `kronii audit verify` does (each row's link to the one before and its hash,
kronii.stores.audit.row_hash), from the first row on the first look and when the person asks for the
whole chain; in between, a look goes on from the last row it checked (a long-running mesh has
hundreds of thousands of rows: about 60 µs each to check), and says so."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from kronii.console.core.privacy import AuditEntry, ChainCheck, TableSize
from kronii.foundation.errors import Unavailable
from kronii.stores.audit import GENESIS_HASH, AuditLog, AuditRow, row_hash
from kronii.stores.db import make_sessionmaker
from sqlalchemy import select, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = ["AuditLogReader", "TableSizes"]

DATABASE_AWAY = "PostgreSQL did not answer"


_BATCH = 1000


@dataclass
class _Checked:
    """How far the chain has been found sound: its last row's id and hash, and the rows behind it."""

    last_id: int = 0
    last_hash: str = GENESIS_HASH
    rows: int = 0


class AuditLogReader:
    def __init__(self, engine: AsyncEngine) -> None:
        self._sessions = make_sessionmaker(engine)
        self._log = AuditLog(self._sessions, "console")
        self._checked = _Checked()
        self._lock = asyncio.Lock()

    async def tail(self, limit: int) -> list[AuditEntry]:
        try:
            rows = await self._log.tail(limit)
        except (SQLAlchemyError, OSError) as error:
            raise Unavailable(f"{DATABASE_AWAY} ({type(error).__name__})") from None
        return [
            AuditEntry(
                id=row.id,
                at=row.at.timestamp(),
                service=row.service,
                actor=row.actor,
                action=row.action,
                subject=row.subject,
                outcome=row.outcome,
            )
            for row in reversed(rows)
        ]

    async def verify(self, whole: bool = False) -> ChainCheck:
        """The chain from where the last look stopped (from the first row when `whole`)."""
        async with self._lock:
            if whole:
                self._checked = _Checked()
            try:
                return await self._walk_on()
            except (SQLAlchemyError, OSError) as error:
                raise Unavailable(f"{DATABASE_AWAY} ({type(error).__name__})") from None

    async def _walk_on(self) -> ChainCheck:
        checked = self._checked
        whole = checked.last_id == 0
        while True:
            async with self._sessions() as session:
                query = (
                    select(AuditRow).where(AuditRow.id > checked.last_id).order_by(AuditRow.id).limit(_BATCH)
                )
                rows = (await session.scalars(query)).all()
            for row in rows:
                broken = _broken(row, checked.last_hash)
                if broken:
                    self._checked = _Checked()  # the next look starts over from the first row
                    return ChainCheck(checked.rows + 1, row.id, broken)
                checked = _Checked(row.id, row.row_hash, checked.rows + 1)
                self._checked = checked
            if len(rows) < _BATCH:
                return ChainCheck(checked.rows, None, "", whole=whole)


def _broken(row: AuditRow, expected_prev: str) -> str:
    if row.prev_hash != expected_prev:
        return "its link to the previous row is broken (a row was removed or changed)"
    computed = row_hash(
        row_id=row.id, at=row.at, service=row.service, actor=row.actor, action=row.action,
        subject=row.subject, outcome=row.outcome, detail=row.detail, prev_hash=row.prev_hash,
    )  # fmt: skip
    if computed != row.row_hash:
        return "its content does not match its hash (the row was altered)"
    return ""


class TableSizes:
    def __init__(self, engine: AsyncEngine, known: Sequence[str]) -> None:
        self._engine = engine
        self._known = frozenset(known)

    async def sizes(self, tables: Sequence[str]) -> list[TableSize]:
        wanted = [name for name in tables if name in self._known and name.isidentifier()]
        try:
            async with self._engine.connect() as connection:
                present = set(
                    (
                        await connection.execute(
                            text(
                                "SELECT relname FROM pg_class WHERE relkind = 'r' AND relname = ANY(:names)"
                            ),
                            {"names": wanted},
                        )
                    ).scalars()
                )
                found: list[TableSize] = []
                for name in wanted:
                    if name not in present:
                        continue
                    rows = await connection.scalar(text(f'SELECT count(*) FROM "{name}"'))  # noqa: S608 - a name from the known list
                    size = await connection.scalar(
                        text("SELECT pg_total_relation_size(:name)"), {"name": name}
                    )
                    found.append(TableSize(name, int(rows or 0), int(size or 0)))
        except (SQLAlchemyError, OSError) as error:
            raise Unavailable(f"{DATABASE_AWAY} ({type(error).__name__})") from None
        return found
