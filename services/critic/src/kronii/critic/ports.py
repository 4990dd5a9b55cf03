"""What the critic's use cases need of the outside world: the adapters implement these, and the unit
tests' fakes do too. Ports take and return core values only."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from typing import Protocol, runtime_checkable

from kronii.critic.core.clusters import ClusterGroup
from kronii.critic.core.doctor import ModelState, PlaceState
from kronii.critic.core.embedding_jobs import EmbeddingResult, QueueStats
from kronii.critic.core.memory import MemoryCounts, RetentionDone
from kronii.critic.core.model import InvocationEvent, InvocationRecord, Trigger
from kronii.critic.core.offers import FailureOffer
from kronii.critic.core.policy import Policy
from kronii.critic.core.recommend import Notification
from kronii.critic.core.retrieval import Hit, QueryContext, RecordFilter, Vector
from kronii.critic.core.sign_index import IndexRows

__all__ = [
    "ClusterShelf",
    "CommandCatalog",
    "Embedder",
    "EmbeddingJobs",
    "EmbeddingQueueStats",
    "GoneShells",
    "HintSink",
    "IndexedStore",
    "IntakeMetrics",
    "LongTier",
    "MemoryHealth",
    "MemoryStore",
    "MemoryUpkeep",
    "ModelInfo",
    "OfferSink",
    "PaneErrorText",
    "PolicySource",
    "PolicyStore",
    "RecordExport",
    "RecordPredicate",
    "RedactionTally",
    "RuntimePlaces",
    "ShellFilesUnusable",
    "ShellSpool",
    "TimeLimitedEmbedder",
    "TriggerSink",
]

RecordPredicate = Callable[[InvocationRecord], bool]


class ShellFilesUnusable(Exception):
    """The critic's runtime dir could not be read or changed; the message says why (the OS's words)."""


class Embedder(Protocol):
    """all-MiniLM-L6-v2 sentence embeddings, unit-normalised, 384 floats each; ``available`` is
    False without the model (then retrieval is by keywords only, never a crash)."""

    @property
    def available(self) -> bool: ...

    def embed(self, texts: Sequence[str]) -> list[tuple[float, ...]]: ...


@runtime_checkable
class TimeLimitedEmbedder(Protocol):
    """An Embedder that can stop a run at a time limit, returning [] then."""

    def embed_within(self, texts: Sequence[str], seconds: float | None) -> list[tuple[float, ...]]: ...


class ModelInfo(Protocol):
    """The embedding model as the doctor shows it (adapters.embedder.MiniLmEmbedder)."""

    def model_state(self) -> ModelState: ...


class EmbeddingJobs(Protocol):
    """adapters.embedding_queue.EmbeddingQueue: ``on_done`` runs on the queue's worker thread."""

    def submit(
        self, key: str, text: str, on_done: Callable[[EmbeddingResult], None] | None = None
    ) -> bool: ...


class EmbeddingQueueStats(Protocol):
    """The embedding queue's counts and its bound."""

    @property
    def capacity(self) -> int: ...

    def stats(self) -> QueueStats: ...


class MemoryStore(Protocol):
    """The tiered memory (adapters.tiered_memory.TieredMemory): RAM ring first, then PostgreSQL
    (pgvector HNSW), written through; the daily files are the journal of the same records. Async
    where a call may reach the disk or the database; ``recent`` is the RAM ring only."""

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


class RecordExport(Protocol):
    """The journal's records for `kronii critic export` (blocking: it reads the day files;
    adapters.memory_export.MemoryExport, the tiered memory's ``exports``)."""

    def export_records(self, since_ms: int, redact: bool = True) -> Iterator[InvocationRecord]:
        """From ``since_ms``, oldest first; ``redact`` masks every path and personal data, and
        leaves the embeddings out."""
        ...


class MemoryHealth(Protocol):
    """What the doctor counts in the tiered memory."""

    def counts(self) -> MemoryCounts: ...

    async def totals(self) -> tuple[int, int]:
        """(records in the kept day files, rows in PostgreSQL; -1 while it does not answer)."""
        ...


class ClusterShelf(Protocol):
    """The nightly clusters kept in the day files (adapters.memory_upkeep.MemoryUpkeeper)."""

    def recent_clusters(self) -> list[ClusterGroup]: ...


class MemoryUpkeep(Protocol):
    """The nightly job: cluster yesterday's failures, then retention
    (adapters.memory_upkeep.MemoryUpkeeper, the tiered memory's ``upkeep``)."""

    async def run_nightly(self) -> tuple[list[list[str]], RetentionDone]: ...


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


class IndexedStore(LongTier, Protocol):
    """A long tier that can also hand every row with an embedding to the in-process index
    (adapters.vector_store.PgVectorStore; adapters.indexed_long_tier.IndexedLongTier searches it)."""

    def index_rows(self, batch: int) -> AsyncIterator[IndexRows]:
        """Batches of at most ``batch`` rows, all read from one snapshot of the table."""
        ...


class HintSink(Protocol):
    """The line the shell's precmd hook prints at the next prompt of ``session`` (it reads it with
    a deadline of a few ms, so this only leaves it where the hook looks)."""

    async def send(self, session: str, line: str) -> None: ...


class GoneShells(Protocol):
    """The hint box's files of shells that ended without their exit hook (adapters.spool.HintBox)."""

    def forget_gone(self) -> list[str]:
        """Remove them; the sessions removed. Blocking; ShellFilesUnusable when the directory is."""
        ...


class ShellSpool(Protocol):
    """The shells' spool (adapters.spool.SpoolReader): the events the hooks wrote, in order, and the
    count of lines skipped as malformed so far."""

    @property
    def malformed(self) -> int: ...

    def events(self) -> AsyncIterator[InvocationEvent]: ...


class RuntimePlaces(Protocol):
    """The spool file and the hint directory, as the doctor shows them."""

    def spool(self) -> PlaceState: ...

    def hints(self) -> PlaceState: ...


class TriggerSink(Protocol):
    """A desktop notification asked of the pipeline (a pipeline trigger); texts are redacted."""

    async def publish(self, notification: Notification) -> None: ...


class OfferSink(Protocol):
    """A repeated failure offered to the workspace's agent (the supervisor asks the person; nothing
    reaches an agent without their yes); every text is redacted."""

    async def offer(self, offer: FailureOffer) -> None: ...


class CommandCatalog(Protocol):
    """The program names on the critic's PATH (cached by the adapter: listing PATH is I/O)."""

    def names(self) -> frozenset[str]: ...


class PolicySource(Protocol):
    """The person's policy as it stands now (adapters.policy_file.PolicyFile re-reads on change)."""

    def current(self) -> Policy: ...


class PolicyStore(PolicySource, Protocol):
    """The policy with its mute written and its problem read: ``problem`` is what is wrong with
    critic.toml as of the last ``current()`` (None when nothing is)."""

    @property
    def problem(self) -> str | None: ...

    def write_mute(self, until_ms: int) -> None: ...


class PaneErrorText(Protocol):
    """adapters.pane_errors.PaneErrors (opt-in): what a command printed, read from the supervisor's
    pane on its terminal; "" for any other terminal. Blocking: it runs in a thread."""

    def error_text(self, tty: str, command_line: str) -> str: ...


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


class RedactionTally(Protocol):
    """The placeholders put in since the critic started (the service's metrics count them)."""

    def redactions_total(self) -> int: ...
