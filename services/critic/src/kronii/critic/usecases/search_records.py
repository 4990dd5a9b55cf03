"""`kronii critic search`: records like a text, semantic when the model is there (the tiered KNN,
then only the hits close enough), merged with the records that hold the words; keywords alone
without the model."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from kronii.critic.core.commands import SearchQuery
from kronii.critic.core.retrieval import Hit, QueryContext, RecordFilter
from kronii.critic.ports import Embedder, MemoryStore
from kronii.foundation.clock import Clock

__all__ = ["MIN_SEARCH_SIMILARITY", "KnnObserver", "SearchRecords", "TimedKnn"]

_SCAN = 2000  # records looked at for a keyword search, newest first
# A record found by meaning alone must be at least this close to what was searched for: below it the
# nearest records of a small history are noise, not answers.
MIN_SEARCH_SIMILARITY = 0.45

KnnObserver = Callable[[str, float], None]  # (the deepest tier reached, seconds)


class TimedKnn:
    """The tiered KNN, timed by the deepest tier it had to reach."""

    def __init__(self, memory: MemoryStore, clock: Clock, observe: KnnObserver) -> None:
        self._memory = memory
        self._clock = clock
        self._observe = observe

    async def __call__(
        self, vector: Sequence[float], k: int, context: QueryContext, where: RecordFilter | None = None
    ) -> list[Hit]:
        started = self._clock.monotonic()
        hits = await self._memory.knn(vector, k, context, where)
        tier = "disk" if any(hit.tier != "ram" for hit in hits) else "ram"
        self._observe(tier, self._clock.monotonic() - started)
        return hits


class SearchRecords:
    def __init__(self, memory: MemoryStore, embedder: Embedder, knn: TimedKnn, clock: Clock) -> None:
        self._memory = memory
        self._embedder = embedder
        self._knn = knn
        self._clock = clock

    async def __call__(self, query: SearchQuery) -> list[Hit]:
        """Best first, at most ``query.take``."""
        triggers = frozenset({query.trigger}) if query.trigger is not None else frozenset()
        record_filter = RecordFilter(
            triggers=triggers,
            command_name=query.command or None,
            failed=True if query.failed_only else None,
            since_ms=query.since_ms or None,
        )
        words = query.text.strip()
        if words and self._embedder.available:
            vectors = await asyncio.to_thread(self._embedder.embed, [words])
            if vectors:
                context = QueryContext(now_ms=self._clock.wall_ms())
                hits = await self._knn(vectors[0], max(query.take * 4, 20), context)
                matching = [
                    hit
                    for hit in hits
                    if record_filter(hit.record) and hit.similarity >= MIN_SEARCH_SIMILARITY
                ]
                keyword = await self._keyword(words, record_filter, query.take)
                return _merge(matching, keyword, query.take)
        return await self._keyword(words, record_filter, query.take)

    async def _keyword(self, words: str, record_filter: RecordFilter, take: int) -> list[Hit]:
        """Records whose text holds ``words`` (all of them when empty), newest first."""
        with_text = RecordFilter(
            triggers=record_filter.triggers,
            command_name=record_filter.command_name,
            failed=record_filter.failed,
            since_ms=record_filter.since_ms,
            text=words,
        )
        records = await self._memory.query(with_text, min(_SCAN, take))
        return [Hit(record, 1.0, 1.0, "ram") for record in records[:take]]


def _merge(semantic: list[Hit], keyword: list[Hit], take: int) -> list[Hit]:
    seen: set[str] = set()
    merged: list[Hit] = []
    for hit in [*keyword, *semantic]:
        if hit.record.record_id not in seen:
            seen.add(hit.record.record_id)
            merged.append(hit)
    return merged[:take]
