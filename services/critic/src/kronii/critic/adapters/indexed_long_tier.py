"""The long tier with its similar-record search in the critic's own process: PostgreSQL keeps the
rows, an in-process index (core/sign_index.py) of their embeddings finds the nearest ids, and only
those rows are then read from PostgreSQL by primary key. A PostgreSQL round trip alone costs more
than the whole search in the index (bench/critic_knn.py), so the search cannot be a query.

- **Loading.** ``keep_loaded`` (a task of the service) reads every row that has an embedding from
  one snapshot of the table (PgVectorStore.index_rows) and tries again every ``retry_secs`` while
  PostgreSQL does not answer. Until the index is loaded, searches go to PostgreSQL as before
  (core/knn_plan.py: an exact scan of a small table, else the HNSW index).
- **In step.** Every write of the critic's long tier comes through here: ``upsert`` (the memory's
  writer and its replay of the journal) and ``prune`` (the nightly retention), the only statement
  that deletes rows. Each is applied to the index after PostgreSQL has it; a change made while the
  index loads is also kept and applied to the loaded index before it answers, so nothing written
  after the snapshot is missed. An upsert reaches the index even when PostgreSQL's answer did not
  come (a timeout may come after the commit); a record without an embedding is not indexed (it
  cannot be found by similarity) and leaves an indexed one of the same id as it was, as PostgreSQL
  keeps the stored embedding.
- **Rows gone elsewhere.** An id the index finds but PostgreSQL no longer has (a row deleted by
  hand, or a prune whose answer was lost) is dropped from the index and the search is made again.
- **Answers.** The index's best ``k + exact_margin`` ids are read from PostgreSQL; their cosine is
  computed again from the stored float32 embedding and the best k are returned: the same values an
  exact scan returns, and the int8 vectors' rounding cannot swap the k-th row with the next.
- **Filters.** Triggers, command name, failed and since are applied in the index; a filter on
  ``text`` is searched in PostgreSQL (the texts are not held in RAM).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from kronii.critic.core.model import InvocationRecord
from kronii.critic.core.retrieval import RecordFilter, Vector, unit_vector
from kronii.critic.core.sign_index import DEFAULT_CANDIDATES, IndexRows, SignCodeIndex

if TYPE_CHECKING:  # the ports module pulls in every core rule (and the redaction engine) at import
    from kronii.critic.ports import IndexedStore

__all__ = ["IndexedLongTier"]

log = logging.getLogger(__name__)

LOAD_BATCH = 10_000
DEFAULT_EXACT_MARGIN = 5
_SEARCH_ATTEMPTS = 2  # a second search when rows the first found were gone from PostgreSQL

Change = Callable[[SignCodeIndex], object]


class IndexedLongTier:
    """ports.LongTier over an IndexedStore (PgVectorStore), searching an in-process index."""

    def __init__(
        self,
        store: IndexedStore,
        candidates: int = DEFAULT_CANDIDATES,
        exact_margin: int = DEFAULT_EXACT_MARGIN,
        retry_secs: float = 30.0,
    ) -> None:
        self._store = store
        self._candidates = candidates
        self._exact_margin = exact_margin
        self._retry_secs = retry_secs
        self._index: SignCodeIndex | None = None
        self._pending: list[Change] | None = None  # changes made while a load runs
        self.load_seconds: float | None = None

    @property
    def index(self) -> SignCodeIndex | None:
        """The loaded index (None while it loads: PostgreSQL answers the searches then)."""
        return self._index

    # ---- loading ---------------------------------------------------------------------------

    async def load(self) -> SignCodeIndex:
        """Read every row with an embedding into a new index, apply the changes made meanwhile,
        and search it from now on."""
        self._pending = []
        started = time.perf_counter()
        fresh = SignCodeIndex(self._candidates)
        try:
            async for rows in self._store.index_rows(LOAD_BATCH):
                fresh.upsert(rows)
            for change in self._pending:
                change(fresh)
        finally:
            self._pending = None
        self._index = fresh
        self.load_seconds = time.perf_counter() - started
        log.info(
            "critic: similar-record index loaded, %d rows in %.1f s, %.0f MB",
            len(fresh), self.load_seconds, fresh.nbytes / 2**20,
        )  # fmt: skip
        return fresh

    async def keep_loaded(self) -> None:
        """Load the index, trying again every ``retry_secs`` while PostgreSQL does not answer."""
        while self._index is None:
            try:
                await self.load()
            except Exception as error:  # PostgreSQL away: its own search answers meanwhile
                log.warning(
                    "critic: the similar-record index could not be loaded (%s); again in %.0f s",
                    type(error).__name__, self._retry_secs,
                )  # fmt: skip
                await asyncio.sleep(self._retry_secs)

    def _apply(self, change: Change) -> None:
        if self._index is not None:
            change(self._index)
        if self._pending is not None:
            self._pending.append(change)

    # ---- writes ----------------------------------------------------------------------------

    async def upsert(self, records: Sequence[InvocationRecord]) -> None:
        rows = IndexRows.of(records)
        try:
            await self._store.upsert(records)
        finally:  # the commit may have happened when the answer did not come: a row too many is dropped
            # at the first search that finds it missing, a row too few would never be found
            if len(rows):
                self._apply(lambda index: index.upsert(rows))

    async def prune(self, before_ms: int) -> int:
        pruned = await self._store.prune(before_ms)
        self._apply(lambda index: index.remove_before(before_ms))
        return pruned

    # ---- search ----------------------------------------------------------------------------

    async def knn(
        self,
        embedding: Sequence[float] | Vector,
        k: int,
        ef_search: int | None = None,
        record_filter: RecordFilter | None = None,
    ) -> list[tuple[InvocationRecord, float]]:
        """The k records nearest to ``embedding`` that the filter accepts, with their cosine, best
        first: from the index when it is loaded and can apply the filter, else from PostgreSQL."""
        index = self._index
        if k <= 0:
            return []
        if index is None or not index.supports(record_filter):
            return await self._store.knn(embedding, k, ef_search, record_filter)
        query = unit_vector(embedding)
        found: list[tuple[InvocationRecord, float]] = []
        for _ in range(_SEARCH_ATTEMPTS):
            nearest = index.search(query, k + self._exact_margin, record_filter)
            wanted = [record_id for record_id, _ in nearest]
            records = {record.record_id: record for record in await self._store.records(wanted)}
            found = [
                (records[record_id], similarity) for record_id, similarity in nearest if record_id in records
            ]
            gone = [record_id for record_id in wanted if record_id not in records]
            if not gone:
                break
            log.info("critic: %d indexed record(s) no longer in PostgreSQL, dropped", len(gone))
            index.remove(gone)
        return _exactly(query, found)[:k]

    # ---- the rest is PostgreSQL's ----------------------------------------------------------

    async def query(self, record_filter: RecordFilter, take: int) -> list[InvocationRecord]:
        return await self._store.query(record_filter, take)

    async def records(self, record_ids: Sequence[str]) -> list[InvocationRecord]:
        return await self._store.records(record_ids)

    async def stored_since(self, since_ms: int) -> dict[str, bool]:
        return await self._store.stored_since(since_ms)

    async def count(self) -> int:
        return await self._store.count()

    def index_rows(self, batch: int) -> AsyncIterator[IndexRows]:
        return self._store.index_rows(batch)


def _exactly(
    query: Vector, found: list[tuple[InvocationRecord, float]]
) -> list[tuple[InvocationRecord, float]]:
    """The records by the cosine of their stored (float32) embedding, best first."""
    if not found:
        return []
    rescored = [
        (record, float(np.dot(unit_vector(record.embedding), query)) if record.embedding else similarity)
        for record, similarity in found
    ]
    return sorted(rescored, key=lambda item: item[1], reverse=True)
