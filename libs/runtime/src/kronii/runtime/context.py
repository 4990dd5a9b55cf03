"""What a service's code is handed by the runtime: its spec, settings, metrics, bus, stores and
audit log, and the two ways to record an action (`record`, which never hides the action, and
`record_durably`, for work about to be acknowledged)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as aioredis
from kronii.foundation.settings import ServiceSettings
from kronii.foundation.telemetry import CommonMetrics
from kronii.runtime.spec import ServiceSpec
from kronii.stores.audit import AuditLog
from kronii.stores.bus import Bus
from kronii.stores.durable import AuditOutbox, StoreUnavailable, is_store_error, store_error
from prometheus_client import CollectorRegistry
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

__all__ = ["ServiceContext"]

log = logging.getLogger("kronii.runtime.service")


@dataclass
class ServiceContext:
    spec: ServiceSpec
    settings: ServiceSettings
    metrics: CommonMetrics
    registry: CollectorRegistry
    bus: Bus
    redis: aioredis.Redis | None = None
    engine: AsyncEngine | None = None
    sessions: async_sessionmaker[AsyncSession] | None = None
    audit: AuditLog | None = None
    audit_outbox: AuditOutbox | None = None
    started_at: float = field(default_factory=time.time)
    # Set by the runtime's watch while PostgreSQL does not answer (the wall-clock time it went away).
    postgres_down_since: float | None = None
    # Set when a query failed for want of PostgreSQL: wakes the runtime's watch at once.
    postgres_trouble: asyncio.Event = field(default_factory=asyncio.Event)

    def note_postgres_trouble(self) -> None:
        """A query failed for want of PostgreSQL: an outage begins now, unless one is already open
        (the runtime's watch closes it, and writes its audit row, once PostgreSQL answers again)."""
        if self.postgres_down_since is None:
            self.postgres_down_since = time.time()
        self.postgres_trouble.set()

    def require_postgres(self) -> None:
        """Refuse work at the door while PostgreSQL is known to be away (503, nothing done)."""
        if self.postgres_down_since is not None:
            raise StoreUnavailable("PostgreSQL is not reachable; nothing was done, try again shortly")

    @property
    def name(self) -> str:
        return self.spec.name

    async def record(
        self, *, actor: str, action: str, subject: str = "", outcome: str = "", **detail: Any
    ) -> None:
        """Append an audit row; it never hides the action. While PostgreSQL is away the row waits in
        the audit outbox (Redis) and is appended, with its original time, when it is back."""
        if self.audit is None:
            return
        try:
            await self.audit.append(
                actor=actor, action=action, subject=subject, outcome=outcome, detail=detail
            )
            self.metrics.audit_rows.labels(self.name, action).inc()
            return
        except Exception as error:
            if self.audit_outbox is None or not is_store_error(error):
                log.exception("audit append failed for %s", action)
                return
            self.note_postgres_trouble()
        fields = {"actor": actor, "action": action, "subject": subject, "outcome": outcome, "detail": detail}
        try:
            await self.audit_outbox.keep(fields)
            log.warning("PostgreSQL did not take the audit row for %s; it waits in the outbox", action)
        except Exception:
            log.exception("the audit row for %s was lost: neither PostgreSQL nor Redis took it", action)

    async def record_durably(
        self,
        *,
        actor: str,
        action: str,
        subject: str = "",
        outcome: str = "",
        then: Callable[[AsyncSession], Awaitable[None]] | None = None,
        **detail: Any,
    ) -> None:
        """Append an audit row for work about to be acknowledged, and do `then` in its transaction.

        Raises StoreUnavailable when the row cannot be committed: the caller answers 503, never a
        success whose record may be lost."""
        if self.audit is None:
            raise StoreUnavailable("PostgreSQL is not configured; work that must be recorded is refused")
        try:
            await self.audit.append(
                actor=actor, action=action, subject=subject, outcome=outcome, detail=detail, then=then
            )
        except Exception as error:
            if is_store_error(error):
                self.note_postgres_trouble()
                raise store_error(error) from error
            raise
        self.metrics.audit_rows.labels(self.name, action).inc()
