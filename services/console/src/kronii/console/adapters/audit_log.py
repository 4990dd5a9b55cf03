"""The audit log and the tables' sizes for the Privacy page, on the console's PostgreSQL engine:
the chain's last rows and its verification (kronii.stores.audit.AuditLog, the same walk as `kronii
audit verify`), and rows and bytes on disk of the tables that keep the person's data (AuditChain,
StoreSizes). Only table names from the console's own list are ever put into SQL."""

from __future__ import annotations

from collections.abc import Sequence

from kronii.console.core.privacy import AuditEntry, ChainCheck, TableSize
from kronii.foundation.errors import Unavailable
from kronii.stores.audit import AuditLog
from kronii.stores.db import make_sessionmaker
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = ["AuditLogReader", "TableSizes"]

DATABASE_AWAY = "PostgreSQL did not answer"


class AuditLogReader:
    def __init__(self, engine: AsyncEngine) -> None:
        self._log = AuditLog(make_sessionmaker(engine), "console")

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

    async def verify(self) -> ChainCheck:
        try:
            report = await self._log.verify()
        except (SQLAlchemyError, OSError) as error:
            raise Unavailable(f"{DATABASE_AWAY} ({type(error).__name__})") from None
        return ChainCheck(report.rows_checked, report.first_broken_id, report.reason)


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
