"""`kronii critic similar`: past failures like one record, or like the last failing command of a
session or a directory. A command that succeeded is never one of them, however close its text
(every tier is asked for failures only)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from kronii.critic.core.commands import Similar, SimilarQuery
from kronii.critic.core.model import InvocationRecord
from kronii.critic.core.retrieval import Hit, QueryContext, RecordFilter
from kronii.critic.ports import Embedder, MemoryStore
from kronii.critic.usecases.search_records import TimedKnn
from kronii.foundation.clock import Clock
from kronii.foundation.errors import NotFound

__all__ = ["FindSimilar"]

_FAILURES = RecordFilter(failed=True)


class FindSimilar:
    def __init__(self, memory: MemoryStore, embedder: Embedder, knn: TimedKnn, clock: Clock) -> None:
        self._memory = memory
        self._embedder = embedder
        self._knn = knn
        self._clock = clock

    async def __call__(self, query: SimilarQuery) -> Similar:
        anchor = await self._anchor(query)
        vector: Sequence[float] = anchor.embedding
        if not vector and self._embedder.available:
            text = f"{anchor.command_line}\n{anchor.error_message or anchor.summary}"
            vectors = await asyncio.to_thread(self._embedder.embed, [text])
            vector = vectors[0] if vectors else ()
        if not vector:
            same = await self._memory.query(
                RecordFilter(command_name=anchor.command_name, failed=True), query.k + 1
            )
            hits = [Hit(record, 1.0, 1.0, "ram") for record in same if record.record_id != anchor.record_id]
            return Similar(anchor, hits[: query.k])
        context = QueryContext(
            now_ms=self._clock.wall_ms(),
            trigger=anchor.trigger,
            command_name=anchor.command_name,
            cwd=anchor.cwd,
        )
        hits = await self._knn(vector, query.k + 1, context, where=_FAILURES)
        return Similar(anchor, [hit for hit in hits if hit.record.record_id != anchor.record_id][: query.k])

    async def _anchor(self, query: SimilarQuery) -> InvocationRecord:
        """The record to compare with: a caller's mistake the API cannot see (no such record, no
        failing command yet) is a NotFound."""
        if query.record_id:
            found = await self._memory.query(_RecordId(query.record_id), 1)
            if not found:
                raise NotFound("no record has that id (`kronii critic search` lists them)")
            return found[0]
        for record in self._memory.recent(200):
            if record.failed and (
                (query.session and record.session == query.session) or (query.cwd and record.cwd == query.cwd)
            ):
                return record
        failed = await self._memory.query(RecordFilter(failed=True), 1)
        if failed:
            return failed[0]
        raise NotFound("no failing command is remembered yet to compare with")


class _RecordId:
    """A predicate for one record by id (not a RecordFilter: only RAM and the files can answer it)."""

    def __init__(self, record_id: str) -> None:
        self.record_id = record_id

    def __call__(self, record: InvocationRecord) -> bool:
        return record.record_id == self.record_id
