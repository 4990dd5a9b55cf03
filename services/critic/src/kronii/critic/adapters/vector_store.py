"""The long memory tier: `critic_records` in PostgreSQL (migration 0008_critic), one row per
InvocationRecord, the embedding in a pgvector column searched through its HNSW cosine index, or by
an exact scan of every row when the table is small or the index's answer cannot stand
(core/knn_plan.py says when, and why).

pgvector's HNSW scan returns at most `hnsw.ef_search` rows (40 by default), so an index search sets
it for its own transaction (SET LOCAL through set_config).
The table's size is PostgreSQL's own estimate (pg_class.reltuples, kept by autovacuum's ANALYZE),
read again once a minute; a table never analyzed yet is counted."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import numpy as np
from kronii.critic.core.knn_plan import MAX_EF_SEARCH, KnnTuning, index_answer_holds, scan_exactly
from kronii.critic.core.model import EMBEDDING_DIM, InvocationRecord, Trigger
from kronii.critic.core.retrieval import RecordFilter, Vector, unit_vector
from kronii.critic.core.sign_index import IndexRows
from pgvector.sqlalchemy import Vector as VectorColumn
from sqlalchemy import (
    BigInteger,
    Column,
    ColumnElement,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    Select,
    Table,
    Text,
    and_,
    delete,
    func,
    or_,
    select,
    text,
    true,
)
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = ["PgVectorStore", "critic_records"]

SIZE_TTL_S = 60.0  # the table's size is read again after this long (it grows by a row a command)
_FILTERED_WIDENING = 10  # a filtered search looks at this many candidates per row it returns
_metadata = MetaData()

critic_records = Table(
    "critic_records",
    _metadata,
    Column("record_id", Text, primary_key=True),
    Column("timestamp_ms", BigInteger, nullable=False),
    Column("trigger", Text, nullable=False),
    Column("command_name", Text, nullable=False),
    Column("command_line", Text, nullable=False),
    Column("cwd", Text, nullable=False),
    Column("exit_status", Integer, nullable=False),
    Column("duration_ms", BigInteger, nullable=False),
    Column("shell", Text, nullable=False),
    Column("session", Text, nullable=False),
    Column("error_type", Text, nullable=False),
    Column("error_message", Text, nullable=False),
    Column("summary", Text, nullable=False),
    Column("redactions", Integer, nullable=False),
    Column("embedding", VectorColumn(EMBEDDING_DIM), nullable=True),
    Index("ix_critic_records_timestamp", "timestamp_ms"),
    Index("ix_critic_records_command", "command_name", "timestamp_ms"),
    Index("ix_critic_records_trigger", "trigger", "timestamp_ms"),
    Index("ix_critic_records_failed", "timestamp_ms", postgresql_where=text("exit_status <> 0")),
    Index(
        "ix_critic_records_embedding",
        "embedding",
        postgresql_using="hnsw",
        postgresql_ops={"embedding": "vector_cosine_ops"},
    ),
)
_TEXT_FIELDS = (
    "command_name",
    "command_line",
    "cwd",
    "shell",
    "session",
    "error_type",
    "error_message",
    "summary",
)


def _row(record: InvocationRecord) -> dict[str, Any]:
    return {
        "record_id": record.record_id,
        "timestamp_ms": record.timestamp_ms,
        "trigger": record.trigger.value,
        "exit_status": record.exit_status,
        "duration_ms": record.duration_ms,
        "redactions": record.redactions,
        "embedding": unit_vector(record.embedding) if record.embedding else None,
        **{name: getattr(record, name) for name in _TEXT_FIELDS},
    }


def _record(row: Any) -> InvocationRecord:
    columns = row._mapping
    embedding = columns["embedding"]
    return InvocationRecord(
        record_id=columns["record_id"],
        timestamp_ms=int(columns["timestamp_ms"]),
        trigger=Trigger(columns["trigger"]),
        exit_status=int(columns["exit_status"]),
        duration_ms=int(columns["duration_ms"]),
        redactions=int(columns["redactions"]),
        embedding=() if embedding is None else tuple(float(value) for value in np.asarray(embedding)),
        **{name: columns[name] for name in _TEXT_FIELDS},
    )


def _where(record_filter: RecordFilter) -> ColumnElement[bool]:
    table = critic_records.c
    clauses: list[ColumnElement[bool]] = []
    if record_filter.triggers:
        clauses.append(table.trigger.in_(sorted(trigger.value for trigger in record_filter.triggers)))
    if record_filter.command_name is not None:
        clauses.append(table.command_name == record_filter.command_name)
    if record_filter.failed is not None:
        clauses.append(table.exit_status != 0 if record_filter.failed else table.exit_status == 0)
    if record_filter.since_ms is not None:
        clauses.append(table.timestamp_ms >= record_filter.since_ms)
    if record_filter.text:
        needle = record_filter.text
        clauses.append(
            or_(
                *(
                    column.icontains(needle, autoescape=True)
                    for column in (table.command_line, table.error_message, table.summary)
                )
            )
        )
    return and_(true(), *clauses)


_TABLE_ROWS = text(
    "SELECT CASE WHEN reltuples >= 0 THEN reltuples::bigint "
    "ELSE (SELECT count(*) FROM critic_records) END "
    "FROM pg_class WHERE oid = 'critic_records'::regclass"
)
_SET_EF_SEARCH = text("SELECT set_config('hnsw.ef_search', :ef, true)")
# pgvector's binary form of a vector (vector_send): int16 dimensions, int16 unused, then the values as
# big-endian float32; read so, 100,000 rows decode in one numpy call instead of parsing their text.
_VECTOR_HEADER = 4
_VECTOR_BYTES = _VECTOR_HEADER + 4 * EMBEDDING_DIM


def _index_rows(rows: Sequence[Any]) -> IndexRows:
    raw = np.frombuffer(b"".join(bytes(row[5]) for row in rows), dtype=np.uint8)
    values = raw.reshape(len(rows), _VECTOR_BYTES)[:, _VECTOR_HEADER:]
    vectors = np.ascontiguousarray(values).view(">f4").astype(np.float32)
    return IndexRows(
        record_ids=[str(row[0]) for row in rows],
        vectors=vectors,
        timestamps_ms=np.fromiter((int(row[1]) for row in rows), dtype=np.int64, count=len(rows)),
        triggers=[Trigger(row[2]) for row in rows],
        command_names=[str(row[3]) for row in rows],
        failed=np.fromiter((int(row[4]) != 0 for row in rows), dtype=bool, count=len(rows)),
    )


def _nearest(query: Vector, k: int, record_filter: RecordFilter | None, *, exact: bool) -> Select[Any]:
    """The k rows nearest to `query` (a unit vector), with their cosine distance as "distance".

    The exact scan orders by 1 - inner product: on the unit vectors stored (see _row) the same order
    and value as the cosine distance, but an expression the cosine HNSW index cannot serve, so
    PostgreSQL reads every row whatever plan it has cached for the statement (a setting such as
    enable_indexscan would not reach a generic plan psycopg has prepared)."""
    embedding = critic_records.c.embedding
    distance = 1 + embedding.max_inner_product(query) if exact else embedding.cosine_distance(query)
    statement = select(critic_records, distance.label("distance")).order_by(distance).limit(k)
    return statement if record_filter is None else statement.where(_where(record_filter))


class PgVectorStore:
    def __init__(
        self,
        engine: AsyncEngine,
        tuning: KnnTuning | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._engine = engine
        self._tuning = tuning or KnnTuning()
        self._clock = clock
        self._rows: tuple[int, float] | None = None  # (estimate, when read)

    async def upsert(self, records: Sequence[InvocationRecord]) -> None:
        """Insert the records, or update them in place; an embedding already stored is kept when
        the new version has none."""
        if not records:
            return
        statement = insert(critic_records)
        updated: dict[str, Any] = {
            column.name: statement.excluded[column.name]
            for column in critic_records.c
            if column.name != "record_id"
        }
        updated["embedding"] = func.coalesce(statement.excluded.embedding, critic_records.c.embedding)
        statement = statement.on_conflict_do_update(index_elements=["record_id"], set_=updated)
        async with self._engine.begin() as conn:
            await conn.execute(statement, [_row(record) for record in records])

    async def knn(
        self,
        embedding: Sequence[float] | Vector,
        k: int,
        ef_search: int | None = None,
        record_filter: RecordFilter | None = None,
    ) -> list[tuple[InvocationRecord, float]]:
        """The k records nearest to `embedding`, with their cosine: by an exact scan on a small
        table, else by the HNSW index (at `ef_search`, else the tuning's), searched again exactly when
        the index's answer cannot stand (core/knn_plan.py). With `record_filter`, only rows it
        accepts (the index scan is widened, as pgvector filters the rows it found)."""
        if k <= 0:
            return []
        query = unit_vector(embedding)
        ef = max(ef_search or self._tuning.ef_search, k)
        if record_filter is not None:
            ef = min(max(ef, k * _FILTERED_WIDENING), MAX_EF_SEARCH)
        if not scan_exactly(await self._table_rows(), self._tuning):
            found = await self._search(_nearest(query, k, record_filter, exact=False), ef)
            if index_answer_holds([similarity for _, similarity in found], k, self._tuning):
                return found
        return await self._search(_nearest(query, k, record_filter, exact=True), None)

    async def _search(self, statement: Select[Any], ef: int | None) -> list[tuple[InvocationRecord, float]]:
        async with self._engine.begin() as conn:
            if ef is not None:
                await conn.execute(_SET_EF_SEARCH, {"ef": str(ef)})
            rows = (await conn.execute(statement)).all()
        # NULL embeddings sort last; an index scan skips them, a sequential scan would not.
        return [(_record(row), 1.0 - float(row.distance)) for row in rows if row.distance is not None]

    async def _table_rows(self) -> int:
        """PostgreSQL's estimate of the table's rows, read at most once per SIZE_TTL_S."""
        now = self._clock()
        if self._rows is None or now - self._rows[1] >= SIZE_TTL_S:
            async with self._engine.connect() as conn:
                self._rows = (int((await conn.execute(_TABLE_ROWS)).scalar_one()), now)
        return self._rows[0]

    async def query(self, record_filter: RecordFilter, take: int) -> list[InvocationRecord]:
        """Up to `take` records the filter accepts, newest first."""
        if take <= 0:
            return []
        statement = (
            select(critic_records)
            .where(_where(record_filter))
            .order_by(critic_records.c.timestamp_ms.desc(), critic_records.c.record_id)
            .limit(take)
        )
        async with self._engine.connect() as conn:
            rows = (await conn.execute(statement)).all()
        return [_record(row) for row in rows]

    async def records(self, record_ids: Sequence[str]) -> list[InvocationRecord]:
        """The rows of these ids (those that exist)."""
        if not record_ids:
            return []
        statement = select(critic_records).where(critic_records.c.record_id.in_(list(record_ids)))
        async with self._engine.connect() as conn:
            rows = (await conn.execute(statement)).all()
        return [_record(row) for row in rows]

    async def index_rows(self, batch: int) -> AsyncIterator[IndexRows]:
        """Every row that has an embedding, for the in-process index (core/sign_index.py), in batches
        of ``batch`` rows read through one server-side cursor (one snapshot of the table)."""
        table = critic_records.c
        statement = select(
            table.record_id,
            table.timestamp_ms,
            table.trigger,
            table.command_name,
            table.exit_status,
            func.vector_send(table.embedding, type_=LargeBinary),
        ).where(table.embedding.isnot(None))
        async with self._engine.connect() as conn:
            result = await conn.stream(statement.execution_options(yield_per=batch))
            async for rows in result.partitions(batch):
                yield _index_rows(rows)

    async def stored_since(self, since_ms: int) -> dict[str, bool]:
        """The ids of the rows at or after `since_ms`, each with whether it has its embedding."""
        statement = select(critic_records.c.record_id, critic_records.c.embedding.isnot(None)).where(
            critic_records.c.timestamp_ms >= since_ms
        )
        async with self._engine.connect() as conn:
            rows = (await conn.execute(statement)).all()
        return {str(row[0]): bool(row[1]) for row in rows}

    async def prune(self, before_ms: int) -> int:
        """Delete the rows older than `before_ms`; returns how many went."""
        async with self._engine.begin() as conn:
            result = await conn.execute(
                delete(critic_records).where(critic_records.c.timestamp_ms < before_ms)
            )
        return int(result.rowcount or 0)

    async def count(self) -> int:
        async with self._engine.connect() as conn:
            return int((await conn.execute(select(func.count()).select_from(critic_records))).scalar_one())
