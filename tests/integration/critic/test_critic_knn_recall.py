"""The critic's similar-record search on random rows against the test run's PostgreSQL: the
adapter's default finds the true five nearest of random queries (where the old ef_search 40 on the
index did not), the index's answer stands for a near-duplicate and goes to an exact scan when its
best hit is noise, and the size switch between an exact scan and the index, at its edge."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg
import pytest
import pytest_asyncio
from kronii.critic.adapters.vector_store import PgVectorStore
from kronii.critic.core.knn_plan import KnnTuning
from kronii.critic.core.model import EMBEDDING_DIM, InvocationRecord
from kronii.foundation.urls import libpq_url
from kronii.stores.db import make_engine, migrate_up
from pgvector.psycopg import register_vector
from sqlalchemy import Select
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.infra import InfraUrls, create_database
from tests.unit.critic.memory_history import record

Matrix = npt.NDArray[np.float32]
ROWS = 4000
QUERIES = 30
NEVER_FALLS_BACK = -1.0  # no cosine is below it: the index's answer always stands


def _unit_rows(rng: np.random.Generator, count: int) -> Matrix:
    rows = rng.standard_normal((count, EMBEDDING_DIM)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows


@pytest.fixture(scope="module")
def rows() -> Matrix:
    return _unit_rows(np.random.default_rng(35), ROWS)


@pytest.fixture(scope="module")
def knn_database(infra: InfraUrls, rows: Matrix) -> str:
    """ROWS random rows, then the migration's own HNSW index built over them (as after an import)."""
    url = create_database(infra.database, "kronii_critic_knn")
    migrate_up(url)
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        register_vector(conn)
        found = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_critic_records_embedding'"
        ).fetchone()
        assert found is not None
        conn.execute("DROP INDEX ix_critic_records_embedding")
        columns = "record_id, timestamp_ms, trigger, command_line, exit_status, embedding"
        with conn.cursor().copy(f"COPY critic_records ({columns}) FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.set_types(["text", "int8", "text", "text", "int4", "vector"])
            for index, vector in enumerate(rows):
                copy.write_row((f"r{index:05d}", 1_750_000_000_000 + index, "error", "make", 2, vector))
        conn.execute(str(found[0]))
        conn.execute("ANALYZE critic_records")
    return url


@pytest_asyncio.fixture
async def engine(knn_database: str) -> AsyncIterator[AsyncEngine]:
    made = make_engine(knn_database)
    yield made
    await made.dispose()


async def _recall(store: PgVectorStore, rows: Matrix, queries: Matrix) -> float:
    found = 0
    for query in queries:
        exact = {f"r{int(index):05d}" for index in np.argsort(-(rows @ query))[:5]}
        found += len(exact & {item.record_id for item, _ in await store.knn(query, 5)})
    return found / (5 * len(queries))


async def test_the_default_search_finds_the_true_five_nearest_of_random_queries(
    engine: AsyncEngine, rows: Matrix
) -> None:
    queries = _unit_rows(np.random.default_rng(1), QUERIES)
    assert await _recall(PgVectorStore(engine), rows, queries) >= 0.95
    # What the adapter did before: the HNSW index alone at pgvector's default ef_search 40.
    old = PgVectorStore(engine, KnnTuning(ef_search=40, exact_below=0, trust_above=NEVER_FALLS_BACK))
    assert await _recall(old, rows, queries) < 0.95


async def test_an_index_answer_whose_best_hit_is_noise_is_searched_again_exactly(
    engine: AsyncEngine, rows: Matrix
) -> None:
    queries = _unit_rows(np.random.default_rng(2), QUERIES)
    # ef_search 5 on 4,000 random rows finds few of the true five; the best hit is ~0.2 similar.
    index_alone = KnnTuning(ef_search=5, exact_below=0, trust_above=NEVER_FALLS_BACK)
    assert await _recall(PgVectorStore(engine, index_alone), rows, queries) < 0.9
    with_fallback = KnnTuning(ef_search=5, exact_below=0)
    assert await _recall(PgVectorStore(engine, with_fallback), rows, queries) == 1.0


class CountingSearches(PgVectorStore):
    """The adapter as it is, counting the searches it sends to PostgreSQL (index or exact scan)."""

    searches = 0

    async def _search(self, statement: Select[Any], ef: int | None) -> list[tuple[InvocationRecord, float]]:
        self.searches += 1
        return await super()._search(statement, ef)


async def test_a_near_duplicate_is_answered_by_the_index_alone_and_a_random_query_twice(
    engine: AsyncEngine, rows: Matrix
) -> None:
    rng = np.random.default_rng(3)
    target = rows[123]
    noise = rng.standard_normal(EMBEDDING_DIM).astype(np.float32)
    noise -= float(noise @ target) * target
    query = 0.9 * target + np.sqrt(1 - 0.81) * noise / np.linalg.norm(noise)
    store = CountingSearches(engine, KnnTuning(exact_below=0))
    hits = await store.knn(query, 5)
    assert hits[0][0].record_id == "r00123" and hits[0][1] == pytest.approx(0.9, abs=0.01)
    assert store.searches == 1
    await store.knn(_unit_rows(rng, 1)[0], 5)
    assert store.searches == 3


async def test_the_size_switch_scans_exactly_one_row_below_it_and_uses_the_index_at_it(
    engine: AsyncEngine, rows: Matrix
) -> None:
    queries = _unit_rows(np.random.default_rng(4), QUERIES)
    below = KnnTuning(ef_search=5, exact_below=ROWS + 1, trust_above=NEVER_FALLS_BACK)
    assert await _recall(PgVectorStore(engine, below), rows, queries) == 1.0
    at = KnnTuning(ef_search=5, exact_below=ROWS, trust_above=NEVER_FALLS_BACK)
    assert await _recall(PgVectorStore(engine, at), rows, queries) < 0.9


async def test_a_table_never_analyzed_is_counted_for_the_size_switch(infra: InfraUrls) -> None:
    url = create_database(infra.database, "kronii_critic_knn_fresh")
    migrate_up(url)
    fresh = make_engine(url)
    try:
        rng = np.random.default_rng(5)
        vectors = _unit_rows(rng, 30)  # fewer than autovacuum's 50 changes: it never analyzes them
        await PgVectorStore(fresh).upsert([record(f"f{n:02d}", vector) for n, vector in enumerate(vectors)])
        query = _unit_rows(rng, 1)[0]  # nothing near it: the index's answer would not stand
        below = CountingSearches(fresh, KnnTuning(exact_below=31))
        assert len(await below.knn(query, 5)) == 5 and below.searches == 1  # 30 rows counted: exact only
        at = CountingSearches(fresh, KnnTuning(exact_below=30))
        assert len(await at.knn(query, 5)) == 5 and at.searches == 2  # the index, then the exact scan
    finally:
        await fresh.dispose()
