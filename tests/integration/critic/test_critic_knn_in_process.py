"""The critic's long tier searched in process (adapters/indexed_long_tier.py) against the test run's
PostgreSQL: the index loaded from the table answers with the records and cosines of PostgreSQL's
exact scan, filters included; a record pruned, or deleted by hand, is no longer returned; records
written while the index loads are found once it is loaded."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
import pytest_asyncio
from kronii.critic.adapters.daily_files import DailyFiles
from kronii.critic.adapters.indexed_long_tier import IndexedLongTier
from kronii.critic.adapters.tiered_memory import TieredMemory
from kronii.critic.adapters.vector_store import PgVectorStore
from kronii.critic.core.knn_plan import KnnTuning
from kronii.critic.core.memory import MemoryOptions
from kronii.critic.core.model import InvocationRecord
from kronii.critic.core.retrieval import DAY_MS, RecordFilter
from kronii.critic.core.sign_index import IndexRows
from kronii.stores.db import make_engine, migrate_up
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.infra import InfraUrls, create_database
from tests.unit.critic.memory_history import History, make_history, near, random_unit, record

ROWS = 3000
EXACT = KnnTuning(exact_below=2**62)  # PostgreSQL scans every row: the reference


@pytest.fixture(scope="module")
def history() -> History:
    made = make_history(total=ROWS, groups=20, seed=36)
    varied = [replace(item, exit_status=n % 2) for n, item in enumerate(made.records)]
    return History(varied, made.matrix, made.anchors, made.planted)


@pytest.fixture(scope="module")
def knn_database(infra: InfraUrls) -> str:
    url = create_database(infra.database, "kronii_critic_knn_in_process")
    migrate_up(url)
    return url


@pytest_asyncio.fixture
async def engine(knn_database: str, history: History) -> AsyncIterator[AsyncEngine]:
    """The history's rows, written as the critic writes them (its upsert), without the HNSW index:
    kept up row by row it costs the suite seconds and nothing here reads it."""
    made = make_engine(knn_database)
    async with made.begin() as conn:
        await conn.exec_driver_sql("DROP INDEX IF EXISTS ix_critic_records_embedding")
        await conn.exec_driver_sql("TRUNCATE critic_records")
    store = PgVectorStore(made)
    for start in range(0, ROWS, 500):
        await store.upsert(history.records[start : start + 500])
    yield made
    await made.dispose()


def _ids(found: list[tuple[InvocationRecord, float]]) -> list[str]:
    return [record.record_id for record, _ in found]


async def test_the_in_process_search_answers_as_postgresql_s_exact_scan(
    engine: AsyncEngine, history: History
) -> None:
    exact = PgVectorStore(engine, EXACT)
    tier = IndexedLongTier(PgVectorStore(engine), candidates=500)  # 500 of 3,000: the sign codes choose
    index = await tier.load()
    assert len(index) == ROWS
    rng = np.random.default_rng(7)
    queries = [near(anchor, 0.95, rng) for anchor in history.anchors.values()]
    for query in queries:
        for record_filter in (None, RecordFilter(failed=True)):
            ours = await tier.knn(query, 5, record_filter=record_filter)
            theirs = await exact.knn(query, 5, record_filter=record_filter)
            assert [record for record, _ in ours] == [record for record, _ in theirs]
            for (_, mine), (_, true) in zip(ours, theirs, strict=True):
                assert mine == pytest.approx(true, abs=1e-5)
    # Random queries (no neighbour above the noise) with every row scored exactly by the index:
    # the same five rows as PostgreSQL's scan.
    everything = IndexedLongTier(PgVectorStore(engine))
    await everything.load()
    for query in random_unit(rng, 10):
        assert _ids(await everything.knn(query, 5)) == _ids(await exact.knn(query, 5))


async def test_a_record_pruned_or_deleted_in_postgresql_is_no_longer_returned(
    engine: AsyncEngine, history: History
) -> None:
    tier = IndexedLongTier(PgVectorStore(engine))
    await tier.load()
    query = near(history.anchors["anchor-3"], 0.95, np.random.default_rng(8))
    first, second, *_ = _ids(await tier.knn(query, 5))
    oldest = min(history.records, key=lambda item: item.timestamp_ms).timestamp_ms
    before_ms = next(item.timestamp_ms for item in history.records if item.record_id == first) + 1
    pruned = await tier.prune(before_ms)
    assert (
        pruned == sum(1 for item in history.records if item.timestamp_ms < before_ms) and oldest < before_ms
    )
    assert first not in _ids(await tier.knn(query, 5))
    index = tier.index
    assert index is not None and first not in index and len(index) == ROWS - pruned
    async with engine.begin() as conn:  # deleted by hand, behind the critic's back
        await conn.exec_driver_sql("DELETE FROM critic_records WHERE record_id = %(id)s", {"id": second})
    assert second in index
    found = _ids(await tier.knn(query, 5))
    assert second not in found and len(found) == 5
    assert second not in index


class PausingStore(PgVectorStore):
    """The real store, running ``meanwhile`` after the first batch of the index's load."""

    def __init__(self, engine: AsyncEngine, meanwhile: Callable[[], Awaitable[None]]) -> None:
        super().__init__(engine)
        self._meanwhile = meanwhile

    async def index_rows(self, batch: int) -> AsyncIterator[IndexRows]:
        first = True
        async for rows in super().index_rows(batch):
            yield rows
            if first:
                await self._meanwhile()
                first = False


async def test_records_written_and_pruned_while_the_index_loads_are_in_step_once_loaded(
    engine: AsyncEngine, history: History
) -> None:
    rng = np.random.default_rng(9)
    late = record("late", random_unit(rng, 1)[0], timestamp_ms=history.records[-1].timestamp_ms + 1)
    oldest = history.records[0]

    async def meanwhile() -> None:
        await tier.upsert([late])
        await tier.prune(oldest.timestamp_ms + 1)

    tier = IndexedLongTier(PausingStore(engine, meanwhile))
    assert _ids(await tier.knn(history.matrix[0], 1)) == [oldest.record_id]  # PostgreSQL answers
    tier_index = await tier.load()
    assert "late" in tier_index and oldest.record_id not in tier_index
    assert _ids(await tier.knn(np.asarray(late.embedding, dtype=np.float32), 1)) == ["late"]
    assert oldest.record_id not in _ids(await tier.knn(history.matrix[0], 5))


async def test_a_text_filter_is_searched_in_postgresql(engine: AsyncEngine, history: History) -> None:
    tier = IndexedLongTier(PgVectorStore(engine))
    await tier.load()
    wanted = history.records[42]
    found = await tier.knn(history.matrix[42], 3, record_filter=RecordFilter(text=wanted.command_line))
    assert _ids(found) == [wanted.record_id]


async def test_the_tiered_memory_keeps_the_index_in_step_through_its_writer_and_retention(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    """The critic's own callers: the memory's writer upserts through the indexed tier and the
    nightly retention prunes through it, so a search sees a new record and not a pruned one."""
    now_ms = int(datetime(2025, 6, 30, 12, tzinfo=UTC).timestamp() * 1000)
    tier = IndexedLongTier(PgVectorStore(engine))
    await tier.load()
    memory = TieredMemory(
        DailyFiles(tmp_path, tz=UTC),
        tier,
        MemoryOptions(ring_size=1, retention_days=30),
        clock=lambda: now_ms,
    )
    rng = np.random.default_rng(10)
    old_anchor, new_anchor = random_unit(rng, 2)
    await memory.add(record("old", near(old_anchor, 0.97, rng), timestamp_ms=now_ms - 40 * DAY_MS))
    await memory.add(record("new", near(new_anchor, 0.97, rng), timestamp_ms=now_ms - DAY_MS))
    await memory.add(record("ring", random_unit(rng, 1)[0], timestamp_ms=now_ms))  # the ring's one record
    assert await memory.sync()
    index = tier.index
    assert index is not None and all(name in index for name in ("old", "new", "ring"))
    assert [hit.record.record_id for hit in await memory.knn(old_anchor, 1)] == ["old"]
    assert (await memory.upkeep.run_retention(now_ms)).pruned_rows is not None
    assert "old" not in index
    assert "old" not in [hit.record.record_id for hit in await memory.knn(old_anchor, 3)]
    assert [hit.record.record_id for hit in await memory.knn(new_anchor, 1)] == ["new"]
    await memory.close()
