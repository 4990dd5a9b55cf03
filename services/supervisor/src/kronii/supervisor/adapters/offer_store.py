"""The critic's failure offers in PostgreSQL (tables.py supervisor_failure_offers): kept when they
come, marked when the person accepts one. An offer id seen again is the same offer."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kronii.foundation.errors import Unavailable
from kronii.supervisor.adapters.tables import failure_offers
from kronii.supervisor.core.offers import FailureOffer
from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = ["OfferStore"]


def _dt(at: float) -> datetime:
    return datetime.fromtimestamp(at, UTC)


def _offer(row: Any) -> FailureOffer:
    c = row._mapping
    return FailureOffer(
        offer_id=c["offer_id"], command_line=c["command_line"], exit_code=c["exit_code"], error_text=c["error_text"],
        cwd=c["cwd"], times=c["times"], failure_key=c["failure_key"], at=c["offered_at"].timestamp(),
        workspace_id=c["workspace_id"], agent_id=c["agent_id"],
        accepted_at=c["accepted_at"].timestamp() if c["accepted_at"] else None, thread_id=c["thread_id"],
        seq=int(c["seq"]),
    )  # fmt: skip


class OfferStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def keep(self, offer: FailureOffer) -> FailureOffer:
        """Keep a new offer; an id seen before answers the offer kept then."""
        try:
            async with self._engine.begin() as conn:
                await conn.execute(
                    insert(failure_offers)
                    .values(
                        offer_id=offer.offer_id,
                        workspace_id=offer.workspace_id,
                        agent_id=offer.agent_id,
                        failure_key=offer.failure_key,
                        command_line=offer.command_line,
                        exit_code=offer.exit_code,
                        error_text=offer.error_text,
                        cwd=offer.cwd,
                        times=offer.times,
                        offered_at=_dt(offer.at),
                        accepted_at=None,
                        thread_id="",
                        seq=0,
                    )
                    .on_conflict_do_nothing()
                )
                row = (
                    await conn.execute(
                        select(failure_offers).where(failure_offers.c.offer_id == offer.offer_id)
                    )
                ).one()
        except (OperationalError, OSError):
            raise Unavailable("PostgreSQL is not reachable; the offer was not kept") from None
        return _offer(row)

    async def find(self, offer_id: str) -> FailureOffer | None:
        async with self._engine.connect() as conn:
            row = (
                await conn.execute(select(failure_offers).where(failure_offers.c.offer_id == offer_id))
            ).first()
        return _offer(row) if row else None

    async def latest_open(self) -> FailureOffer | None:
        query = (
            select(failure_offers)
            .where(failure_offers.c.accepted_at.is_(None))
            .order_by(failure_offers.c.offered_at.desc())
            .limit(1)
        )
        async with self._engine.connect() as conn:
            row = (await conn.execute(query)).first()
        return _offer(row) if row else None

    async def accepted(self, offer_id: str, thread_id: str, seq: int, at: float) -> None:
        async with self._engine.begin() as conn:
            await conn.execute(
                update(failure_offers)
                .where(failure_offers.c.offer_id == offer_id, failure_offers.c.accepted_at.is_(None))
                .values(accepted_at=_dt(at), thread_id=thread_id, seq=seq)
            )
