"""Envelopes and audit rows written off the event path: envelopes in batches (PostgreSQL), audit
rows in order; publishing never waits for the database.

What is queued is written `gather_secs` after the first of it arrived, in one transaction: a
transaction costs the sensor more CPU than everything else a focus change does, and one every few
seconds is what the history's durability already allows (the open span's end is written every
`activity_flush_secs`). A stop and a person's delete do not wait for the gather (`flush`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass

from kronii.foundation.audit_trail import AuditTrail
from kronii.sensor.core.snapshot import Envelope
from kronii.sensor.ports import EventStore, StoreFailed

__all__ = ["GATHER_SECS", "RecordActivity"]

log = logging.getLogger(__name__)

_QUEUE = 10_000
_BATCH = 500  # envelopes a transaction
GATHER_SECS = 5.0


@dataclass(frozen=True)
class _AuditRow:
    actor: str
    action: str
    outcome: str


class RecordActivity:
    def __init__(
        self, events: EventStore | None, audit: AuditTrail, gather_secs: float = GATHER_SECS
    ) -> None:
        self._events = events
        self._audit = audit
        self._gather_secs = gather_secs
        self._writes: asyncio.Queue[Envelope | _AuditRow] = asyncio.Queue(maxsize=_QUEUE)
        self._hurry = asyncio.Event()
        self._queued = self._handled = 0  # items ever queued, and ever handled (written or failed)
        self._progress = asyncio.Condition()

    def envelope(self, envelope: Envelope) -> None:
        """Queue an envelope for the writer."""
        self._queue(envelope, "row")

    def audit(self, *, actor: str, action: str, outcome: str) -> None:
        self._queue(_AuditRow(actor, action, outcome), "audit")

    def _queue(self, item: Envelope | _AuditRow, what: str) -> None:
        try:
            self._writes.put_nowait(item)
            self._queued += 1
        except asyncio.QueueFull:
            log.warning("the database writer is behind; dropping a %s", what)

    async def run(self) -> None:
        """Write what was queued, a gather at a time, forever."""
        while True:
            batch = [await self._writes.get()]
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._hurry.wait(), self._gather_secs)
            self._hurry.clear()
            while not self._writes.empty():
                batch.append(self._writes.get_nowait())
            await self._write(batch)

    async def _write(self, batch: list[Envelope | _AuditRow]) -> None:
        """The envelopes in transactions of _BATCH, then the audit rows in their order."""
        rows = [item for item in batch if isinstance(item, Envelope)]
        for first in range(0, len(rows), _BATCH):
            try:
                if self._events is not None:
                    await self._events.write(rows[first : first + _BATCH])
            except StoreFailed as error:
                log.warning("persisting %d activity envelopes failed: %s", len(rows[first:]), error)
                break
        for item in batch:
            if isinstance(item, _AuditRow):
                await self._audit(actor=item.actor, action=item.action, outcome=item.outcome)
        async with self._progress:
            self._handled += len(batch)
            self._progress.notify_all()

    async def flush(self, wait_secs: float) -> None:
        """Write what is queued now without waiting for the gather, and wait up to `wait_secs` for it
        (a stop, a delete); what is queued after the call is not waited for."""
        queued = self._queued
        self._hurry.set()
        async with self._progress:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._progress.wait_for(lambda: self._handled >= queued), wait_secs)
