"""Forget activity: a person's delete (a range, one app, everything) and the retention that drops
what is older than `activity_retention_days`. Both remove the spans and the raw envelopes of
`activity_events` beside them; a delete is audited with its counts, never a title."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from kronii.foundation.audit_trail import AuditTrail
from kronii.foundation.clock import Clock
from kronii.sensor.core.activity_query import DeleteSelector
from kronii.sensor.ports import SpanStore, StoreFailed
from kronii.sensor.usecases.keep_spans import KeepSpans
from kronii.sensor.usecases.record_activity import RecordActivity

__all__ = ["DELETE_ACTION", "Deleted", "ForgetActivity"]

log = logging.getLogger(__name__)

DELETE_ACTION = "sensor.activity.delete"
_DAY = 86400.0
_HOUR = 3600.0
# How long a delete waits for the envelopes already queued to be written first (else one written
# after the delete would bring back what the person removed).
_QUEUED_WAIT_SECS = 5.0


@dataclass(frozen=True, slots=True)
class Deleted:
    spans: int
    events: int


class ForgetActivity:
    def __init__(
        self,
        store: SpanStore,
        spans: KeepSpans,
        record: RecordActivity,
        audit: AuditTrail,
        clock: Clock,
        retention_days: float,
    ) -> None:
        self._store = store
        self._spans = spans
        self._record = record
        self._audit = audit
        self._clock = clock
        self._retention_days = retention_days

    async def delete(self, selector: DeleteSelector, actor: str) -> Deleted:
        """Delete what the selector names; raises StoreFailed when PostgreSQL did not take it."""
        await self._record.flush(_QUEUED_WAIT_SECS)
        async with self._spans.cut():
            spans, events = await self._store.delete(selector)
        deleted = Deleted(spans, events)
        await self._audit(
            actor=actor,
            action=DELETE_ACTION,
            subject=selector.describe(),
            outcome="deleted",
            spans=spans,
            events=events,
        )
        log.info("activity deleted (%s): %d spans, %d events", selector.describe(), spans, events)
        return deleted

    async def prune(self) -> Deleted:
        """Retention once: spans that ended and envelopes written before the retention window."""
        before = self._clock.wall() - self._retention_days * _DAY
        spans, events = await self._store.prune(before)
        if spans or events:
            log.info("retention removed %d activity spans and %d events", spans, events)
        return Deleted(spans, events)

    async def prune_forever(self, every_secs: float = _HOUR) -> None:
        """Retention at start and then every hour."""
        while True:
            try:
                await self.prune()
            except StoreFailed as error:
                log.warning("activity retention failed; it runs again in an hour: %s", error)
            await asyncio.sleep(every_secs)
