"""What the critic's orchestration needs of the outside world; the adapters implement these, and
the unit tests' fakes do too."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from kronii.critic.core.model import InvocationRecord

__all__ = ["Embedder", "Hit", "MemoryStore", "RecordPredicate"]

RecordPredicate = Callable[[InvocationRecord], bool]


class Embedder(Protocol):
    """all-MiniLM-L6-v2 sentence embeddings, unit-normalised, 384 floats each; ``available`` is
    False without the model (then retrieval is by keywords only, never a crash)."""

    @property
    def available(self) -> bool: ...

    def embed(self, texts: Sequence[str]) -> list[tuple[float, ...]]: ...


@dataclass(frozen=True)
class Hit:
    record: InvocationRecord
    similarity: float  # cosine, -1..1 (1 for an exact keyword hit without embeddings)
    score: float  # the hybrid score the results are ordered by
    tier: str  # "ram" | "disk" (PostgreSQL's HNSW index)


class MemoryStore(Protocol):
    """The tiered memory: RAM ring first, then PostgreSQL (pgvector HNSW), written through; the
    daily files are the journal of the same records."""

    def add(self, record: InvocationRecord) -> None: ...

    def query(self, predicate: RecordPredicate, take: int) -> list[InvocationRecord]: ...

    def knn(self, embedding: Sequence[float], k: int) -> list[Hit]: ...

    def recent(self, take: int) -> Iterable[InvocationRecord]: ...
