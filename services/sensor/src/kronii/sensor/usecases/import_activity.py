"""Bring in spans from another tool (an ActivityWatch export, read by `kronii activity import-aw`):
titles through the redaction engine here too, whatever the client did, and each span once by its key."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from kronii.foundation.audit_trail import AuditTrail
from kronii.foundation.clock import Clock
from kronii.sensor.core.activity_query import ImportedSpan
from kronii.sensor.core.model import Focus
from kronii.sensor.ports import SpanStore, TitleCleaner

__all__ = ["IMPORT_ACTION", "ImportActivity", "Imported"]

IMPORT_ACTION = "sensor.activity.import"
_DAY = 86400.0


@dataclass(frozen=True, slots=True)
class Imported:
    """How many spans were new, and how many of those ended before the retention window (the
    next retention run deletes them, as it deletes the sensor's own)."""

    added: int
    beyond_retention: int


class ImportActivity:
    def __init__(
        self, store: SpanStore, titles: TitleCleaner, audit: AuditTrail, clock: Clock, retention_days: float
    ) -> None:
        self._store = store
        self._titles = titles
        self._audit = audit
        self._clock = clock
        self._retention_days = retention_days

    async def add(self, spans: Sequence[ImportedSpan], source: str, actor: str) -> Imported:
        """The spans not imported before, added. Raises StoreFailed."""
        cleaned = [
            dataclasses.replace(
                span, title=self._titles.clean(Focus(app_name=span.app, title=span.title)).title
            )
            if span.title
            else span
            for span in spans
        ]
        added = await self._store.add_imported(cleaned)
        await self._audit(
            actor=actor,
            action=IMPORT_ACTION,
            subject=source,
            outcome="imported",
            sent=len(spans),
            added=added,
        )
        cutoff = self._clock.wall() - self._retention_days * _DAY
        old = sum(1 for span in spans if span.ended_at < cutoff)
        return Imported(added, min(old, added))
