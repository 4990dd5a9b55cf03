"""What the critic's orchestration needs of the outside world (the adapters implement these, and the
unit tests' fakes do too), and what its API needs of the orchestration (CriticOperations)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kronii.critic.core.model import InvocationEvent, InvocationRecord, Trigger
from kronii.critic.core.recommend import Notification
from kronii.critic.core.retrieval import Hit, QueryContext, RecordFilter, Vector

__all__ = [
    "Clock",
    "CommandCatalog",
    "CriticOperations",
    "DoctorReport",
    "Embedder",
    "EmbeddingQueueState",
    "HintSink",
    "Hit",
    "HookSeen",
    "IntakeMetrics",
    "LongTier",
    "MemoryStore",
    "ModelState",
    "PlaceState",
    "RecordCounts",
    "RecordPredicate",
    "Reported",
    "SearchQuery",
    "Similar",
    "SimilarQuery",
    "TriggerSink",
]

RecordPredicate = Callable[[InvocationRecord], bool]


class Embedder(Protocol):
    """all-MiniLM-L6-v2 sentence embeddings, unit-normalised, 384 floats each; ``available`` is
    False without the model (then retrieval is by keywords only, never a crash)."""

    @property
    def available(self) -> bool: ...

    def embed(self, texts: Sequence[str]) -> list[tuple[float, ...]]: ...


class MemoryStore(Protocol):
    """The tiered memory (memory.TieredMemory): RAM ring first, then PostgreSQL (pgvector HNSW),
    written through; the daily files are the journal of the same records. Async where a call may
    reach the disk or the database; ``recent`` is the RAM ring only."""

    async def add(self, record: InvocationRecord) -> None:
        """Keep a record; adding one again with the same id (its embedding or summary came later)
        replaces it."""
        ...

    async def query(self, predicate: RecordPredicate, take: int) -> list[InvocationRecord]:
        """Newest first. A core.retrieval.RecordFilter runs as SQL in PostgreSQL; any other
        callable is checked over the day files."""
        ...

    async def knn(
        self,
        embedding: Sequence[float] | Vector,
        k: int,
        context: QueryContext | None = None,
        where: RecordFilter | None = None,
    ) -> list[Hit]:
        """Best hybrid score first; ``context`` (the current command) turns the boosts on; ``where``
        keeps only the records it accepts."""
        ...

    def recent(self, take: int) -> Iterable[InvocationRecord]: ...

    def get(self, record_id: str) -> InvocationRecord | None:
        """The record of that id if the RAM ring holds it (no disk, no database)."""
        ...


class HintSink(Protocol):
    """The line the shell's precmd hook prints at the next prompt of ``session`` (it reads it with
    a deadline of a few ms, so this only leaves it where the hook looks)."""

    async def send(self, session: str, line: str) -> None: ...


class TriggerSink(Protocol):
    """A desktop notification asked of the pipeline (a pipeline trigger); texts are redacted."""

    async def publish(self, notification: Notification) -> None: ...


class Clock(Protocol):
    def now_ms(self) -> int:
        """Wall time, ms since the epoch: record times, the mute, the repeat window."""
        ...

    def monotonic(self) -> float:
        """Seconds, for durations (event to hint)."""
        ...


class CommandCatalog(Protocol):
    """The program names on the critic's PATH (cached by the adapter: listing PATH is I/O)."""

    def names(self) -> frozenset[str]: ...


class IntakeMetrics(Protocol):
    """What the intake counts; the service's Prometheus metrics implement it."""

    def event_taken(self, shell: str) -> None: ...

    def redactions(self, where: str, count: int) -> None:
        """``where``: "command" | "error" | "cwd"."""
        ...

    def critique(self, kind: Trigger) -> None: ...

    def rule_failed(self, kind: Trigger) -> None: ...

    def hint_shown(self, seconds: float) -> None:
        """From the event taken to its hint handed to the HintSink."""
        ...


class LongTier(Protocol):
    """PostgreSQL's critic_records (adapters.vector_store.PgVectorStore)."""

    async def upsert(self, records: Sequence[InvocationRecord]) -> None: ...

    async def knn(
        self,
        embedding: Sequence[float] | Vector,
        k: int,
        ef_search: int | None = None,
        record_filter: RecordFilter | None = None,
    ) -> list[tuple[InvocationRecord, float]]: ...

    async def query(self, record_filter: RecordFilter, take: int) -> list[InvocationRecord]: ...

    async def records(self, record_ids: Sequence[str]) -> list[InvocationRecord]: ...

    async def stored_since(self, since_ms: int) -> dict[str, bool]: ...

    async def prune(self, before_ms: int) -> int: ...

    async def count(self) -> int: ...


# ---- what the API needs of the orchestration ----------------------------------------------------


@dataclass(frozen=True)
class SearchQuery:
    """`kronii critic search`: ``text`` "" matches every record; ``since_ms`` 0 means all time;
    ``take`` is already within 1..500."""

    text: str
    take: int
    trigger: Trigger | None = None
    command: str = ""
    failed_only: bool = False
    since_ms: int = 0


@dataclass(frozen=True)
class SimilarQuery:
    """Similar to ``record_id``, or (when it is "") to the last failing command of ``session``, else
    of ``cwd``; at least one of the three is set; ``k`` is within 1..100."""

    record_id: str
    session: str
    cwd: str
    k: int


@dataclass(frozen=True)
class Reported:
    """What became of a reported event: the record as kept (None when nothing was kept) and the
    hint for the next prompt ("" for none)."""

    record: InvocationRecord | None
    hint: str = ""


@dataclass(frozen=True)
class Similar:
    anchor: InvocationRecord
    hits: list[Hit]


@dataclass(frozen=True)
class HookSeen:
    shell: str
    events: int
    last_seen_ms: int  # 0: none since the critic started


@dataclass(frozen=True)
class PlaceState:
    """The spool file or the hint directory: where, whether usable, why not, what waits there."""

    path: str
    ok: bool
    problem: str = ""
    pending: int = 0


@dataclass(frozen=True)
class ModelState:
    available: bool
    name: str = ""
    sha256: str = ""
    problem: str = ""


@dataclass(frozen=True)
class RecordCounts:
    ram: int
    files: int
    database: int
    redactions: int


@dataclass(frozen=True)
class EmbeddingQueueState:
    depth: int
    capacity: int
    dropped: int
    latency_p50_ms: float
    latency_p95_ms: float


@dataclass(frozen=True)
class DoctorReport:
    """`kronii critic doctor`: ``muted_until_ms`` 0 when hints are not muted; ``problems`` are
    sentences, empty when all is well."""

    hooks: list[HookSeen]
    spool: PlaceState
    hints: PlaceState
    model: ModelState
    records: RecordCounts
    embeddings: EmbeddingQueueState
    muted_until_ms: int = 0
    problems: list[str] = field(default_factory=list)


class CriticOperations(Protocol):
    """The critic's operations as api/ calls them, arguments already validated. A caller's mistake
    the API cannot see (no such record, no failing command to compare with) is a KroniiError:
    NotFound, InvalidArgument naming the field."""

    async def report(self, event: InvocationEvent) -> Reported:
        """Redact, keep and evaluate one command from `kronii run` or a supervisor pane."""
        ...

    async def search(self, query: SearchQuery) -> list[Hit]:
        """Best first, at most ``query.take``."""
        ...

    async def similar(self, query: SimilarQuery) -> Similar: ...

    def export(self, since_ms: int, redact: bool) -> AsyncIterator[InvocationRecord]:
        """The kept records from ``since_ms`` (0: all), oldest first; ``redact`` masks paths and
        personal data too, for sharing."""
        ...

    async def doctor(self) -> DoctorReport: ...

    async def mute(self, seconds: int) -> int:
        """Mute hints for ``seconds`` (0 unmutes); the time they are muted until, in ms since the
        epoch (0 when not muted)."""
        ...
