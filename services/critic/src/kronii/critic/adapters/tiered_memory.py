"""The tiered memory (seed 003, "Index / Store / App Memory" and "Retrieval"): the RAM ring of the last
records, the day files as the journal, PostgreSQL with pgvector for the long tier.

- ``add`` puts a record in the ring and the day file at once (a record in the file is never lost),
  then queues it for PostgreSQL. A writer task (``start``) writes the queue in batches. When
  PostgreSQL is away the writer remembers the oldest record it could not write and, once PostgreSQL
  answers again, replays the journal from there: every record whose row is missing (or lacks the
  embedding the file has) is written. ``start`` replays the whole retention window the same way, so
  records kept while the critic or PostgreSQL was down reach the database.
- ``query``: the ring first; for the rest a RecordFilter runs as SQL when PostgreSQL is in step with
  the journal, otherwise (or for any other predicate) the day files are read newest first.
- ``knn``: the ring first (exact); when it has fewer than k records at least ``ram_enough`` similar,
  the HNSW index fills in (``candidates_per_k`` x k candidates, so the boosts can reorder them), or a
  bounded window of the day files when PostgreSQL is away. Hybrid-scored, near-duplicates merged by
  the nightly clusters.

Its parts for the nightly job (``upkeep``: clusters and retention, adapters/memory_upkeep.py) and for
sharing (``exports``: the journal's records, masked, adapters/memory_export.py) are its attributes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Sequence

import numpy as np
from kronii.critic.adapters.daily_files import DailyFiles
from kronii.critic.adapters.journal import Journal
from kronii.critic.adapters.memory_export import MemoryExport
from kronii.critic.adapters.memory_upkeep import MemoryUpkeeper
from kronii.critic.core.memory import MemoryCounts, MemoryOptions
from kronii.critic.core.model import InvocationRecord
from kronii.critic.core.retention import prune_before_ms
from kronii.critic.core.retrieval import (
    Hit,
    QueryContext,
    RecordFilter,
    Vector,
    exact_top_k,
    rank,
)
from kronii.critic.core.ring import RecordRing
from kronii.critic.ports import LongTier, RecordPredicate

__all__ = ["TieredMemory"]

log = logging.getLogger(__name__)

# Records kept in RAM for PostgreSQL when even the day file could not take them (a full disk);
# beyond this the oldest are dropped, counted in MemoryCounts.lost.
_UNJOURNALED_LIMIT = 10_000


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class TieredMemory:
    def __init__(
        self,
        files: DailyFiles,
        long_tier: LongTier | None,
        options: MemoryOptions | None = None,
        clock: Callable[[], int] = _now_ms,
    ) -> None:
        self._files = files
        self._long = long_tier
        self._options = options or MemoryOptions()
        self._clock = clock
        self._ring = RecordRing(self._options.ring_size)
        self._queue: list[tuple[InvocationRecord, bool]] = []  # (record, journaled)
        self._unsynced_since_ms: int | None = None
        self._sync_lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._writer: asyncio.Task[None] | None = None
        self._database_failures = 0
        self._replayed = 0
        self._lost = 0
        self._journal = Journal(files)
        self.upkeep = MemoryUpkeeper(files, long_tier, self._options, clock)
        self.exports = MemoryExport(files, self._journal)

    # ---- life ------------------------------------------------------------------------------

    async def start(self) -> None:
        """Warm the ring from the day files, load the clusters, and start the writer, which first
        brings PostgreSQL in step with the journal of the retention window."""
        now_ms = self._clock()
        recent = []
        for record in self._files.read_records(since_ms=None, newest_first=True):
            recent.append(record)
            if len(recent) >= self._ring.capacity:
                break
        for record in reversed(recent):
            self._ring.add(record)
        self.upkeep.load_clusters(self._files.day_of(now_ms))
        if self._long is not None:
            self._unsynced_since_ms = prune_before_ms(now_ms, self._options.retention_days)
        self._writer = asyncio.create_task(self._write_loop(), name="critic-memory-writer")
        self._wake.set()

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._writer
            self._writer = None
        self._journal.flush()
        with contextlib.suppress(Exception):
            await self.sync()
        self._files.close()

    # ---- MemoryStore -----------------------------------------------------------------------

    async def add(self, record: InvocationRecord) -> None:
        """Kept: in the ring, in its day file (or waiting in the journal for room there, written
        at the next add or retry), and queued for PostgreSQL."""
        self._ring.add(record)
        journaled = self._journal.append(record)
        if self._long is not None:
            self._queue.append((record, journaled))
        if self._long is not None or not journaled:
            self._wake.set()

    def recent(self, take: int) -> Iterable[InvocationRecord]:
        return self._ring.find(lambda _: True, take)

    def get(self, record_id: str) -> InvocationRecord | None:
        return self._ring.get(record_id)

    async def query(self, predicate: RecordPredicate, take: int) -> list[InvocationRecord]:
        found = self._ring.find(predicate, take)
        if len(found) >= take:
            return found
        rest = await self._query_database(predicate, take + len(found))
        if rest is None:
            rest = self._query_files(predicate, take + len(found))
        seen = {record.record_id for record in found}
        merged = found + [record for record in rest if record.record_id not in seen]
        merged.sort(key=lambda record: record.timestamp_ms, reverse=True)
        return merged[:take]

    async def knn(
        self,
        embedding: Sequence[float] | Vector,
        k: int,
        context: QueryContext | None = None,
        where: RecordFilter | None = None,
    ) -> list[Hit]:
        """Best hybrid score first; ``where`` keeps only the records it accepts, in every tier (as SQL
        in PostgreSQL), so k hits are k that match and not k minus those filtered out."""
        if k <= 0:
            return []
        context = context or QueryContext(now_ms=self._clock())
        ram = [
            (record, similarity, "ram")
            for record, similarity in self._ring.knn(embedding, len(self._ring))
            if where is None or where(record)
        ]
        strong = [candidate for candidate in ram if candidate[1] >= self._options.ram_enough]
        if len(rank(strong, context, self._options.weights, k, self.upkeep.cluster_of)) >= k:
            return rank(ram, context, self._options.weights, k, self.upkeep.cluster_of)
        candidates = k * self._options.candidates_per_k
        more = await self._knn_database(embedding, candidates, where)
        if more is None:
            more = self._knn_files(embedding, candidates, context.now_ms, where)
        return rank(ram + more, context, self._options.weights, k, self.upkeep.cluster_of)

    # ---- the long tier ---------------------------------------------------------------------

    async def _query_database(self, predicate: RecordPredicate, take: int) -> list[InvocationRecord] | None:
        if self._long is None or not isinstance(predicate, RecordFilter) or not self.in_step:
            return None
        try:
            async with asyncio.timeout(self._options.db_timeout_secs):
                return await self._long.query(predicate, take)
        except Exception as error:  # PostgreSQL away: the journal answers
            self._database_failures += 1
            log.info(
                "critic: PostgreSQL did not answer a query (%s); reading the day files", type(error).__name__
            )
            return None

    def _query_files(self, predicate: RecordPredicate, take: int) -> list[InvocationRecord]:
        found: list[InvocationRecord] = []
        for record in self._files.read_records(newest_first=True):
            if predicate(record):
                found.append(record)
                if len(found) >= take:
                    break
        return found

    async def _knn_database(
        self, embedding: Sequence[float] | Vector, candidates: int, where: RecordFilter | None
    ) -> list[tuple[InvocationRecord, float, str]] | None:
        if self._long is None:
            return None
        try:
            async with asyncio.timeout(self._options.db_timeout_secs):
                found = await self._long.knn(embedding, candidates, record_filter=where)
        except Exception as error:  # PostgreSQL away: a bounded window of the journal answers
            self._database_failures += 1
            log.info(
                "critic: PostgreSQL did not answer a search (%s); reading the day files", type(error).__name__
            )
            return None
        return [(record, similarity, "disk") for record, similarity in found]

    def _knn_files(
        self, embedding: Sequence[float] | Vector, candidates: int, now_ms: int, where: RecordFilter | None
    ) -> list[tuple[InvocationRecord, float, str]]:
        since_ms = now_ms - self._options.disk_window_days * 86_400_000
        records = [
            record
            for record in self._files.read_records(since_ms)
            if record.embedding and (where is None or where(record))
        ]
        if not records:
            return []
        matrix = np.asarray([record.embedding for record in records], dtype=np.float32)
        query = np.asarray(embedding, dtype=np.float32)
        query = query / max(float(np.linalg.norm(query)), 1e-12)
        return [
            (records[index], similarity, "disk")
            for index, similarity in exact_top_k(query, matrix, candidates)
        ]

    # ---- writing through -------------------------------------------------------------------

    @property
    def in_step(self) -> bool:
        """PostgreSQL holds every record of the journal (nothing queued, nothing to replay)."""
        return self._unsynced_since_ms is None and not self._queue

    async def sync(self) -> bool:
        """Write what is queued (and replay the journal if PostgreSQL missed records); True when
        PostgreSQL is in step. The writer calls this; tests and shutdown may too."""
        if self._long is None:
            return False
        async with self._sync_lock:
            if self._unsynced_since_ms is not None and not await self._replay(
                self._long, self._unsynced_since_ms
            ):
                return False
            batch, self._queue = self._queue, []
            try:
                for start in range(0, len(batch), self._options.batch_size):
                    async with asyncio.timeout(self._options.db_timeout_secs):
                        await self._long.upsert(
                            [record for record, _ in batch[start : start + self._options.batch_size]]
                        )
            except Exception as error:
                self._database_failures += 1
                log.warning(
                    "critic: PostgreSQL is away (%s); records wait in the day files", type(error).__name__
                )
                self._keep_unwritten(batch)
                return False
            return True

    def _keep_unwritten(self, batch: list[tuple[InvocationRecord, bool]]) -> None:
        journaled = [record.timestamp_ms for record, in_file in batch if in_file]
        if journaled:
            oldest = min(journaled)
            current = self._unsynced_since_ms
            self._unsynced_since_ms = oldest if current is None else min(current, oldest)
        unjournaled = [item for item in batch if not item[1]]
        self._queue = unjournaled + self._queue
        if len(self._queue) > _UNJOURNALED_LIMIT:
            self._lost += len(self._queue) - _UNJOURNALED_LIMIT
            self._queue = self._queue[-_UNJOURNALED_LIMIT:]

    async def _replay(self, long_tier: LongTier, since_ms: int) -> bool:
        try:
            async with asyncio.timeout(self._options.db_timeout_secs):
                stored = await long_tier.stored_since(since_ms)
            missing = [
                record
                for record in self._files.read_records(since_ms)
                if record.record_id not in stored or (record.embedding and not stored[record.record_id])
            ]
            for start in range(0, len(missing), self._options.batch_size):
                async with asyncio.timeout(self._options.db_timeout_secs):
                    await long_tier.upsert(missing[start : start + self._options.batch_size])
            await self._rejournal(long_tier, stored, since_ms)
        except Exception as error:
            self._database_failures += 1
            log.info("critic: PostgreSQL still away (%s)", type(error).__name__)
            return False
        self._replayed += len(missing)
        self._unsynced_since_ms = None
        return True

    async def _rejournal(self, long_tier: LongTier, stored: dict[str, bool], since_ms: int) -> None:
        """Rows PostgreSQL has that no day file has (kept while the disk was full, and the critic
        stopped before there was room again) are written back into the day files."""
        in_files = {record.record_id for record in self._files.read_records(since_ms)}
        in_files.update(record.record_id for record in self._journal.pending())
        absent = [record_id for record_id in stored if record_id not in in_files]
        for start in range(0, len(absent), self._options.batch_size):
            async with asyncio.timeout(self._options.db_timeout_secs):
                found = await long_tier.records(absent[start : start + self._options.batch_size])
            for record in sorted(found, key=lambda record: record.timestamp_ms):
                self._journal.append(record)
        if absent:
            log.info("critic: %d record(s) only PostgreSQL had are back in the day files", len(absent))

    async def _write_loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            journaled = self._journal.flush()
            synced = self._long is None or await self.sync()
            if not (journaled and synced):
                await asyncio.sleep(self._options.retry_secs)
                self._wake.set()

    async def totals(self) -> tuple[int, int]:
        """(records in the kept day files, rows in PostgreSQL; -1 while it does not answer)."""
        days = self._files.file_days()
        in_files = await asyncio.to_thread(
            lambda: len({record.record_id for day in days for record in self._files.read_day(day)})
        )
        in_database = -1
        if self._long is not None:
            try:
                in_database = await asyncio.wait_for(self._long.count(), self._options.db_timeout_secs)
            except Exception:  # PostgreSQL away: the doctor says so
                in_database = -1
        return in_files, in_database

    def counts(self) -> MemoryCounts:
        return MemoryCounts(
            ram=len(self._ring),
            queued=len(self._queue),
            in_step=self.in_step,
            journal_failures=self._journal.failures,
            database_failures=self._database_failures + self.upkeep.database_failures,
            replayed=self._replayed,
            lost=self._lost + self._journal.lost,
            waiting=len(self._journal.pending()),
        )

    # ---- the nightly job -------------------------------------------------------------------
