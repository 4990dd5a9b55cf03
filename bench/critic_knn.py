"""The critic's KNN: p95 over 10,000 and 1,000,000 records, RAM tier and HNSW tier.

- RAM tier: the ring (200 records, exact numpy) as the critic searches it, and for reference an exact
  in-RAM matrix of every size (numpy, one core's BLAS);
- HNSW tier: PostgreSQL (the embedded server, migration 0008_critic) with N random 384-d unit vectors
  bulk-loaded with binary COPY, the HNSW index built after the load (its build time reported), then
  queries through the critic's own adapter (PgVectorStore.knn, k=5) at hnsw.ef_search 40 (pgvector's
  default) and a tuned value. Recall@5 against exact search for two kinds of query: a near-duplicate
  of a planted group (what the critic looks for: an error seen before) and a random vector (no
  neighbour above the noise: the index's worst case).

Usage: python bench/critic_knn.py [--sizes 10000,1000000] [--queries 200] [--tuned-ef 200]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg
from _common import machine, save, summary_ms
from kronii.critic.adapters.vector_store import PgVectorStore
from kronii.critic.core.model import EMBEDDING_DIM, InvocationRecord, Trigger
from kronii.critic.core.retrieval import exact_top_k
from kronii.critic.core.ring import RecordRing
from kronii.foundation.urls import libpq_url
from kronii.stores.db import make_engine, migrate_up
from pgvector.psycopg import register_vector

from tests.infra import create_database, start_test_infra

Matrix = npt.NDArray[np.float32]
GROUPS = 200
PLANTED = (0.97, 0.94, 0.91, 0.88, 0.85)


def unit_rows(rng: np.random.Generator, count: int) -> Matrix:
    rows = rng.standard_normal((count, EMBEDDING_DIM), dtype=np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows


def near(anchor: Matrix, cosine: float, rng: np.random.Generator) -> Matrix:
    noise = rng.standard_normal(EMBEDDING_DIM).astype(np.float32)
    noise -= float(noise @ anchor) * anchor
    noise /= np.linalg.norm(noise)
    vector: Matrix = (cosine * anchor + np.sqrt(1 - cosine**2) * noise).astype(np.float32)
    return vector


def history(size: int, rng: np.random.Generator) -> tuple[Matrix, Matrix]:
    """`size` random unit rows with GROUPS planted groups of five near-duplicates; the anchors."""
    matrix = unit_rows(rng, size)
    anchors = unit_rows(rng, GROUPS)
    slots = rng.permutation(size)[: GROUPS * len(PLANTED)].reshape(GROUPS, len(PLANTED))
    for anchor, members in zip(anchors, slots, strict=True):
        for slot, cosine in zip(members, PLANTED, strict=True):
            matrix[slot] = near(anchor, cosine, rng)
    return matrix, anchors


def record(index: int, vector: Matrix | None = None) -> InvocationRecord:
    return InvocationRecord(  # noqa: S604 (a record field, nothing is run)
        record_id=f"r{index:07d}", timestamp_ms=1_750_000_000_000 + index, trigger=Trigger.ERROR,
        command_name="make", command_line=f"make target{index}", cwd="/srv/app", exit_status=2,
        duration_ms=10, shell="bash", session="s",
        embedding=() if vector is None else tuple(float(v) for v in vector),
    )  # fmt: skip


def timed(call: Any, queries: Matrix) -> list[float]:
    spent = []
    for query in queries:
        started = time.perf_counter()
        call(query)
        spent.append(time.perf_counter() - started)
    return spent


def ram_figures(matrix: Matrix, queries: Matrix) -> dict[str, Any]:
    ring = RecordRing()
    for index in range(ring.capacity):
        ring.add(record(index, matrix[index]))
    return {
        "ring_200_exact": summary_ms(timed(lambda q: ring.knn(q, 5), queries)),
        "matrix_exact": summary_ms(timed(lambda q: exact_top_k(q, matrix, 5), queries)),
    }


def bulk_load(url: str, matrix: Matrix) -> dict[str, float]:
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        register_vector(conn)
        conn.execute("DROP INDEX IF EXISTS ix_critic_records_embedding")
        conn.execute("TRUNCATE critic_records")
        started = time.perf_counter()
        columns = "record_id, timestamp_ms, trigger, command_name, command_line, cwd, exit_status, embedding"
        with conn.cursor().copy(f"COPY critic_records ({columns}) FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.set_types(["text", "int8", "text", "text", "text", "text", "int4", "vector"])
            for index, vector in enumerate(matrix):
                copy.write_row(
                    (
                        f"r{index:07d}",
                        1_750_000_000_000 + index,
                        "error",
                        "make",
                        f"make target{index}",
                        "/srv/app",
                        2,
                        vector,
                    )
                )
        loaded = time.perf_counter() - started
        conn.execute("SET maintenance_work_mem = '2GB'")
        started = time.perf_counter()
        conn.execute(
            "CREATE INDEX ix_critic_records_embedding ON critic_records USING hnsw (embedding vector_cosine_ops)"
        )
        built = time.perf_counter() - started
        conn.execute("ANALYZE critic_records")
    return {"copy_s": round(loaded, 1), "index_build_s": round(built, 1)}


def recall(found: list[list[str]], matrix: Matrix, queries: Matrix) -> float:
    hits = 0
    for ids, query in zip(found, queries, strict=True):
        exact = {f"r{index:07d}" for index, _ in exact_top_k(query, matrix, 5)}
        hits += len(exact & set(ids))
    return round(hits / (5 * len(queries)), 3)


async def hnsw_figures(url: str, matrix: Matrix, kinds: dict[str, Matrix], efs: list[int]) -> dict[str, Any]:
    engine = make_engine(url)
    store = PgVectorStore(engine)
    figures: dict[str, Any] = {}
    try:
        await store.knn(kinds["near_duplicate"][0], 5)  # warm the pool and the index pages
        for ef in efs:
            for kind, queries in kinds.items():
                spent, found = [], []
                for query in queries:
                    started = time.perf_counter()
                    hits = await store.knn(query, 5, ef_search=ef)
                    spent.append(time.perf_counter() - started)
                    found.append([item.record_id for item, _ in hits])
                figures[f"ef{ef}_{kind}"] = {
                    **summary_ms(spent),
                    "recall_at_5": recall(found, matrix, queries),
                }
    finally:
        await engine.dispose()
    return figures


def bench_size(url: str, size: int, count: int, tuned_ef: int) -> dict[str, Any]:
    rng = np.random.default_rng(size)
    matrix, anchors = history(size, rng)
    kinds = {
        "near_duplicate": np.stack([near(anchors[i % GROUPS], 0.95, rng) for i in range(count)]),
        "random": unit_rows(rng, count),
    }
    figures: dict[str, Any] = {"records": size, "ram": ram_figures(matrix, kinds["near_duplicate"])}
    figures["hnsw_load"] = bulk_load(url, matrix)
    print(f"{size}: loaded {figures['hnsw_load']}", flush=True)
    figures["hnsw_query"] = asyncio.run(hnsw_figures(url, matrix, kinds, [40, tuned_ef]))
    print(f"{size}: {figures['hnsw_query']}", flush=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,1000000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--tuned-ef", type=int, default=200)
    args = parser.parse_args()
    results = []
    with start_test_infra() as infra:
        url = create_database(infra.database, "kronii_bench_critic_knn")
        migrate_up(url)
        for size in (int(part) for part in args.sizes.split(",")):
            results.append(bench_size(url, size, args.queries, args.tuned_ef))
    save("critic_knn", {"machine": machine(), "k": 5, "queries": args.queries, "sizes": results})


if __name__ == "__main__":
    main()
