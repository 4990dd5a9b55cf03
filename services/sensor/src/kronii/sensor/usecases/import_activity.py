"""Bring in spans from another tool (an ActivityWatch export, read by `kronii activity import-aw`):
titles through the redaction engine here too, whatever the client did, and each span once by its key."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from kronii.foundation.audit_trail import AuditTrail
from kronii.sensor.core.activity_query import ImportedSpan
from kronii.sensor.core.model import Focus
from kronii.sensor.ports import SpanStore, TitleCleaner

__all__ = ["IMPORT_ACTION", "ImportActivity"]

IMPORT_ACTION = "sensor.activity.import"


class ImportActivity:
    def __init__(self, store: SpanStore, titles: TitleCleaner, audit: AuditTrail) -> None:
        self._store = store
        self._titles = titles
        self._audit = audit

    async def add(self, spans: Sequence[ImportedSpan], source: str, actor: str) -> int:
        """The spans not imported before, added; how many. Raises StoreFailed."""
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
        return added
