"""The watch on PostgreSQL a service runs while it serves: an outage is noticed at once (a restart
shorter than one probe interval too), written in the audit log when it ends, and the audit rows that
waited in the outbox meanwhile are appended once PostgreSQL answers."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from datetime import UTC, datetime

from kronii.runtime.context import ServiceContext
from kronii.stores.durable import AuditOutbox
from sqlalchemy import text

__all__ = ["PostgresWatch"]

# Between probes while PostgreSQL answers: its start time tells a restart in between anyway.
QUIET_EVERY_SECS = 5.0
# The runtime's lines keep the logger name they have always had.
log = logging.getLogger("kronii.runtime.service")


class PostgresWatch:
    def __init__(self, ctx: ServiceContext, stopping: asyncio.Event) -> None:
        self.ctx = ctx
        self.stopping = stopping
        self._outage_logged = False
        # PostgreSQL's start time and when it last answered: a restart shorter than one probe
        # interval is still an outage, and is recorded as one.
        self._postgres_started: float | None = None
        self._postgres_last_ok: float | None = None

    async def _postgres_start_time(self) -> float:
        if self.ctx.engine is None:
            raise RuntimeError("not configured")
        async with self.ctx.engine.connect() as conn:
            started = (await conn.execute(text("SELECT pg_postmaster_start_time()"))).scalar_one()
        return float(started.timestamp())

    async def _probe_postgres_restart(self) -> bool:
        """True while PostgreSQL answers. A changed start time means it went away between two
        probes: the outage is opened at the last answer seen, so that it is recorded too."""
        try:
            started = await asyncio.wait_for(self._postgres_start_time(), 1.5)
        except Exception:
            return False
        previous, self._postgres_started = self._postgres_started, started
        if previous is not None and started != previous and self.ctx.postgres_down_since is None:
            self.ctx.postgres_down_since = self._postgres_last_ok or started
        self._postgres_last_ok = time.time()
        return True

    async def run(self, every: float = 0.5, quiet_every: float = QUIET_EVERY_SECS) -> None:
        """Notice an outage of PostgreSQL, and put it in the audit log when it ends: every `every`
        seconds while one is open (a query that failed for want of PostgreSQL opens it, and wakes
        the watch), else every `quiet_every` seconds. A restart between two probes is still seen:
        PostgreSQL's start time changed. An idle service probing twice a second cost it about 17
        CPU s an hour."""
        if "postgres" not in self.ctx.spec.needs or self.ctx.engine is None:
            return
        # Each at its own phase: the services that share a process and its pool, all ready at about the
        # same moment, would otherwise probe in step and open connections beyond the pool's idle ones.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stopping.wait(), random.uniform(0, every))
        while not self.stopping.is_set():
            ok = await self._probe_postgres_restart()
            down_since = self.ctx.postgres_down_since
            if not ok and not self._outage_logged:
                self.ctx.note_postgres_trouble()
                self._outage_logged = True
                log.warning(
                    "PostgreSQL is not reachable; work that needs it is answered 503 until it is back"
                )
            if ok and self.ctx.audit_outbox is not None:
                await self._drain_audit_outbox(self.ctx.audit_outbox)
            if ok and down_since is not None:
                await self._record_recovery(down_since)
            await self._pause(every if self.ctx.postgres_down_since is not None else quiet_every)

    async def _pause(self, seconds: float) -> None:
        """Wait `seconds`, or less when a query failed for want of PostgreSQL meanwhile (then
        followed at the watch's quick pace). The runtime cancels the watch when it stops."""
        trouble = self.ctx.postgres_trouble
        trouble.clear()  # an outage noticed before now is in postgres_down_since: `seconds` is short
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(trouble.wait(), seconds)

    async def _record_recovery(self, down_since: float) -> None:
        self.ctx.postgres_down_since = None
        self._outage_logged = False
        seconds = round(max(0.0, time.time() - down_since), 1)
        log.warning("PostgreSQL is back after %.1f s", seconds)
        await self.ctx.record(
            actor="kronii",
            action="service.outage",
            subject="postgres",
            outcome="recovered",
            down_at=datetime.fromtimestamp(down_since, UTC).isoformat(),
            seconds=seconds,
        )

    async def _drain_audit_outbox(self, outbox: AuditOutbox) -> None:
        try:
            moved = await outbox.drain_once()
        except Exception as error:
            log.debug("the audit outbox waits: %s", error)
            return
        if moved:
            log.info("appended %d audit row(s) that waited in the outbox", moved)
