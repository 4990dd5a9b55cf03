"""Envelopes and audit rows written off the event path: envelopes in batches (PostgreSQL), audit
rows in order; publishing never waits for the database."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass

from kronii.foundation.audit_trail import AuditTrail
from kronii.sensor.core.snapshot import Envelope
from kronii.sensor.ports import EventStore, StoreFailed

__all__ = ["RecordActivity"]

log = logging.getLogger(__name__)

_QUEUE = 10_000
_BATCH = 200
# One input's effects queue their envelopes between the event path's awaits (its publishes): waiting
# this long after the first makes them one transaction, not one each (a focus change has two).
_GATHER_SECS = 0.05


@dataclass(frozen=True)
class _AuditRow:
    actor: str
    action: str
    outcome: str


class RecordActivity:
    def __init__(self, events: EventStore | None, audit: AuditTrail) -> None:
        self._events = events
        self._audit = audit
        self._writes: asyncio.Queue[Envelope | _AuditRow] = asyncio.Queue(maxsize=_QUEUE)

    def envelope(self, envelope: Envelope) -> None:
        """Queue an envelope for the writer."""
        self._queue(envelope, "row")

    def audit(self, *, actor: str, action: str, outcome: str) -> None:
        self._queue(_AuditRow(actor, action, outcome), "audit")

    def _queue(self, item: Envelope | _AuditRow, what: str) -> None:
        try:
            self._writes.put_nowait(item)
        except asyncio.QueueFull:
            log.warning("the database writer is behind; dropping a %s", what)

    async def run(self) -> None:
        """Write envelopes in batches and audit rows in order, forever."""
        while True:
            batch = [await self._writes.get()]
            await asyncio.sleep(_GATHER_SECS)
            while not self._writes.empty() and len(batch) < _BATCH:
                batch.append(self._writes.get_nowait())
            rows = [item for item in batch if isinstance(item, Envelope)]
            try:
                if rows and self._events is not None:
                    await self._events.write(rows)
            except StoreFailed as error:
                log.warning("persisting %d activity envelopes failed: %s", len(rows), error)
            for item in batch:
                if isinstance(item, _AuditRow):
                    await self._audit(actor=item.actor, action=item.action, outcome=item.outcome)
                self._writes.task_done()

    async def flush(self, wait_secs: float) -> None:
        """Wait up to `wait_secs` for what was already queued to be written (at stop)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._writes.join(), wait_secs)
