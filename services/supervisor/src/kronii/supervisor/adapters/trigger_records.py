"""A trigger's record is durable before its outcome is answered.

The outcome row (`supervisor_triggers`) and its audit row are committed in one transaction. If
PostgreSQL cannot take them (it died while the prompt was being typed: the work is done and must
not be done again), they go to an outbox list in Redis (append-only file: kept across a kill of
either server) and are drained into PostgreSQL when it is back. Only when neither store takes the
record is the caller told UNAVAILABLE.
"""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import datetime
from typing import Any

import redis.asyncio as aioredis
from kronii.foundation.errors import Unavailable
from kronii.runtime.service import ServiceContext
from kronii.stores.audit import AuditRow
from kronii.stores.durable import is_store_error
from kronii.supervisor.adapters.tables import triggers
from redis.exceptions import RedisError
from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession

__all__ = ["OUTBOX_KEY", "TriggerRecords"]

log = logging.getLogger(__name__)

OUTBOX_KEY = "kronii:supervisor:outbox"


def _encode(item: dict[str, Any]) -> str:
    def default(value: Any) -> Any:
        if isinstance(value, datetime):
            return {"$dt": value.isoformat()}
        return str(value)

    return json.dumps(item, default=default)


def _decode(text: str) -> dict[str, Any]:
    def hook(value: dict[str, Any]) -> Any:
        return datetime.fromisoformat(value["$dt"]) if set(value) == {"$dt"} else value

    decoded: dict[str, Any] = json.loads(text, object_hook=hook)
    return decoded


async def _upsert(session: AsyncSession, row: dict[str, Any]) -> None:
    stmt = pg_insert(triggers).values(**row)
    update = {key: stmt.excluded[key] for key in row if key not in ("trigger_id", "created_at")}
    await session.execute(stmt.on_conflict_do_update(index_elements=["trigger_id"], set_=update))


class TriggerRecords:
    def __init__(self, ctx: ServiceContext, redis: aioredis.Redis) -> None:
        self.ctx = ctx
        self.redis = redis

    async def commit(self, row: dict[str, Any], audit: dict[str, Any] | None) -> str:
        """Make the record durable; returns where it went ("postgres" or "outbox")."""
        try:
            await self._write(row, audit)
            return "postgres"
        except Exception as error:
            if not is_store_error(error) and not isinstance(error, OSError):
                raise
            self.ctx.note_postgres_trouble()
            reason = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
        try:
            await self.redis.rpush(OUTBOX_KEY, _encode({"row": row, "audit": audit}))
        except RedisError:
            raise Unavailable(
                "neither PostgreSQL nor Redis could store the trigger's outcome; ask for it again "
                "with the same trigger_id",
            ) from None
        log.warning(
            "PostgreSQL did not take trigger %s (%s); it waits in the outbox", row["trigger_id"], reason
        )
        return "outbox"

    async def _write(self, row: dict[str, Any], audit: dict[str, Any] | None) -> None:
        async def upsert(session: AsyncSession) -> None:
            await _upsert(session, row)

        if audit is None:
            assert self.ctx.sessions is not None
            async with self.ctx.sessions() as session, session.begin():
                await upsert(session)
            return
        await self.ctx.record_durably(then=upsert, **audit)

    async def _already_audited(self, audit: dict[str, Any]) -> bool:
        assert self.ctx.sessions is not None
        async with self.ctx.sessions() as session:
            found = await session.scalar(
                select(AuditRow.id)
                .where(AuditRow.service == self.ctx.name)
                .where(AuditRow.action == audit["action"])
                .where(AuditRow.subject == audit.get("subject", ""))
                .where(AuditRow.outcome == audit.get("outcome", ""))
                .limit(1)
            )
        return found is not None

    async def drain_once(self) -> int:
        """Move what waits in the outbox into PostgreSQL, oldest first; stops at the first failure."""
        moved = 0
        while True:
            text = await self.redis.lindex(OUTBOX_KEY, 0)
            if text is None:
                return moved
            item = _decode(text if isinstance(text, str) else text.decode())
            audit = item["audit"]
            # A drain interrupted after its commit leaves the item in the list: never a second audit row.
            if audit is not None and await self._already_audited(audit):
                audit = None
            await self._write(item["row"], audit)
            await self.redis.lpop(OUTBOX_KEY)
            moved += 1

    async def drain_forever(self, every: float = 1.0) -> None:
        while True:
            if self.ctx.postgres_down_since is None:
                try:
                    moved = await self.drain_once()
                    if moved:
                        log.info("moved %d trigger record(s) from the outbox into PostgreSQL", moved)
                except Exception as error:
                    log.debug("the outbox waits for PostgreSQL: %s", error)
            await asyncio.sleep(every)
