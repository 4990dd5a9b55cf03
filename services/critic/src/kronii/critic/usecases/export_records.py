"""`kronii critic export`: the kept records from a time, oldest first, masked for sharing unless
asked not to (the tiered memory masks; the day files are read in a thread)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from kronii.critic.core.commands import ExportQuery
from kronii.critic.core.model import InvocationRecord
from kronii.critic.ports import RecordExport

__all__ = ["ExportRecords"]


class ExportRecords:
    def __init__(self, memory: RecordExport) -> None:
        self._memory = memory

    async def __call__(self, query: ExportQuery) -> AsyncIterator[InvocationRecord]:
        records = await asyncio.to_thread(
            lambda: list(self._memory.export_records(query.since_ms, query.redact))
        )
        for record in records:
            yield record
