"""The audit log: append-only rows, each carrying the hash of the row before it.

Appends take a transaction-scoped advisory lock so that the chain stays linear when several
services write at once. `verify` walks the chain from the first row and reports the first row
whose stored hash or link disagrees with what its content gives.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kronii.stores.db import Base
from sqlalchemy import BigInteger, DateTime, Index, Text, func, select, text
from sqlalchemy.dialects.postgresql import CHAR, JSONB
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column

__all__ = [
    "DETAIL_VALUE_CAP",
    "GENESIS_HASH",
    "AuditLog",
    "AuditRow",
    "VerifyReport",
    "capped",
    "row_hash",
]

GENESIS_HASH = "0" * 64
# A detail value longer than this (as text) is stored cut, with the digest and length of the whole:
# the row still says what it was, and a caller cannot grow the audit log by megabytes per request.
DETAIL_VALUE_CAP = 2_000
_LOCK_KEY = 0x6B726F6E6969  # "kronii": one advisory lock for the whole chain


class AuditRow(Base):
    __tablename__ = "audit_log"
    __table_args__ = (Index("ix_audit_log_action_at", "action", "at"),)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    service: Mapped[str] = mapped_column(Text)
    actor: Mapped[str] = mapped_column(Text)
    action: Mapped[str] = mapped_column(Text)
    subject: Mapped[str] = mapped_column(Text, default="")
    outcome: Mapped[str] = mapped_column(Text, default="")
    detail: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    prev_hash: Mapped[str] = mapped_column(CHAR(64))
    row_hash: Mapped[str] = mapped_column(CHAR(64), unique=True)


def row_hash(
    *,
    row_id: int,
    at: datetime,
    service: str,
    actor: str,
    action: str,
    subject: str,
    outcome: str,
    detail: Mapping[str, Any],
    prev_hash: str,
) -> str:
    """SHA-256 over a canonical JSON form of the row and the previous row's hash."""
    canonical = json.dumps(
        {
            "id": row_id,
            "at": at.astimezone(UTC).isoformat(timespec="microseconds"),
            "service": service,
            "actor": actor,
            "action": action,
            "subject": subject,
            "outcome": outcome,
            "detail": detail,
            "prev": prev_hash,
        },
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def _capped_value(value: Any, cap: int) -> Any:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    if len(text) <= cap:
        return value
    return {
        "truncated": text[:cap],
        "length": len(text),
        "sha256": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
    }


def _plain(detail: Mapping[str, Any]) -> dict[str, Any]:
    """JSON's view of the values (what JSONB stores), before they are measured."""
    plain: dict[str, Any] = json.loads(json.dumps(dict(detail), default=str))
    return plain


def capped(detail: Mapping[str, Any], cap: int = DETAIL_VALUE_CAP) -> dict[str, Any]:
    """`detail` with each value longer than `cap` characters (as JSON text, strings as themselves)
    replaced by {"truncated": its first `cap` characters, "length": its length, "sha256": its digest}."""
    return {key: _capped_value(value, cap) for key, value in detail.items()}


def _hash_of(row: AuditRow) -> str:
    return row_hash(
        row_id=row.id,
        at=row.at,
        service=row.service,
        actor=row.actor,
        action=row.action,
        subject=row.subject,
        outcome=row.outcome,
        detail=row.detail,
        prev_hash=row.prev_hash,
    )


@dataclass(frozen=True)
class VerifyReport:
    rows_checked: int
    first_broken_id: int | None = None
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.first_broken_id is None


class AuditLog:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], service: str) -> None:
        self._sessions = sessions
        self.service = service

    async def append(
        self,
        *,
        actor: str,
        action: str,
        subject: str = "",
        outcome: str = "",
        detail: Mapping[str, Any] | None = None,
        at: datetime | None = None,
        then: Callable[[AsyncSession], Awaitable[None]] | None = None,
    ) -> AuditRow:
        """Append one row. `then(session)` runs inside the row's transaction, before the commit:
        rows it writes through `session` and this row stand or fall together, and if it raises, no
        row is written."""
        # JSON round trip: the hash must be computed over exactly what JSONB gives back.
        clean_detail: dict[str, Any] = json.loads(json.dumps(capped(_plain(detail or {})), default=str))
        moment = (at or datetime.now(UTC)).astimezone(UTC)
        async with self._sessions() as session, session.begin():
            await session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK_KEY})
            previous = await session.scalar(select(AuditRow.row_hash).order_by(AuditRow.id.desc()).limit(1))
            row_id = int(await session.scalar(select(func.nextval("audit_log_id_seq"))) or 0)
            prev = previous or GENESIS_HASH
            row = AuditRow(
                id=row_id,
                at=moment,
                service=self.service,
                actor=actor,
                action=action,
                subject=subject,
                outcome=outcome,
                detail=clean_detail,
                prev_hash=prev,
            )
            row.row_hash = _hash_of(row)
            session.add(row)
            await session.flush()
            if then is not None:
                await then(session)
        return row

    async def has_outbox_row(self, outbox_id: str) -> bool:
        """Whether a row that waited in an outbox (kronii.stores.durable) is already in the chain."""
        async with self._sessions() as session:
            found = await session.scalar(
                select(AuditRow.id).where(AuditRow.detail["outbox_id"].astext == outbox_id).limit(1)
            )
        return found is not None

    async def tail(self, limit: int = 20) -> list[AuditRow]:
        async with self._sessions() as session:
            rows = await session.scalars(select(AuditRow).order_by(AuditRow.id.desc()).limit(limit))
            return list(reversed(rows.all()))

    async def _walk(self, batch: int = 1000) -> AsyncIterator[AuditRow]:
        last_id = 0
        while True:
            async with self._sessions() as session:
                rows = (
                    await session.scalars(
                        select(AuditRow).where(AuditRow.id > last_id).order_by(AuditRow.id).limit(batch)
                    )
                ).all()
            if not rows:
                return
            for row in rows:
                yield row
            last_id = rows[-1].id

    async def verify(self) -> VerifyReport:
        expected_prev = GENESIS_HASH
        checked = 0
        async for row in self._walk():
            checked += 1
            if row.prev_hash != expected_prev:
                return VerifyReport(
                    checked, row.id, "its link to the previous row is broken (a row was removed or changed)"
                )
            if _hash_of(row) != row.row_hash:
                return VerifyReport(
                    checked, row.id, "its content does not match its hash (the row was altered)"
                )
            expected_prev = row.row_hash
        return VerifyReport(checked)
