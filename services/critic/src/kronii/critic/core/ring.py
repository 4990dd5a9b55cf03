"""The RAM tier (seed 003, "InMemoryRingBuffer"): the last N records with their unit vectors in one
preallocated matrix, so a KNN over the ring is one matrix-vector product. Eviction drops the oldest
from RAM only; the other tiers keep it."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np
from kronii.critic.core.model import EMBEDDING_DIM, InvocationRecord
from kronii.critic.core.retrieval import Vector, exact_top_k, unit_vector

__all__ = ["DEFAULT_RING_SIZE", "RecordRing"]

DEFAULT_RING_SIZE = 200


class RecordRing:
    def __init__(self, capacity: int = DEFAULT_RING_SIZE) -> None:
        if capacity < 1:
            raise ValueError("a ring holds at least one record")
        self._capacity = capacity
        self._records: list[InvocationRecord | None] = [None] * capacity
        self._vectors = np.zeros((capacity, EMBEDDING_DIM), dtype=np.float32)
        # Rows without an embedding stay out of KNN; zero rows would score 0 and could still be picked.
        self._has_vector = np.zeros(capacity, dtype=bool)
        self._slot_of: dict[str, int] = {}
        self._next = 0
        self._size = 0

    @property
    def capacity(self) -> int:
        return self._capacity

    def __len__(self) -> int:
        return self._size

    def __contains__(self, record_id: object) -> bool:
        return record_id in self._slot_of

    def add(self, record: InvocationRecord) -> InvocationRecord | None:
        """Keep `record` as the newest (replacing a record of the same id in place); returns the
        record evicted to make room, if any."""
        slot = self._slot_of.get(record.record_id)
        if slot is not None:
            self._store(slot, record)
            return None
        slot = self._next
        evicted = self._records[slot]
        if evicted is not None:
            del self._slot_of[evicted.record_id]
        self._store(slot, record)
        self._slot_of[record.record_id] = slot
        self._next = (slot + 1) % self._capacity
        self._size = min(self._size + 1, self._capacity)
        return evicted

    def get(self, record_id: str) -> InvocationRecord | None:
        slot = self._slot_of.get(record_id)
        return None if slot is None else self._records[slot]

    def newest_first(self) -> Iterator[InvocationRecord]:
        for step in range(1, self._size + 1):
            record = self._records[(self._next - step) % self._capacity]
            if record is not None:
                yield record

    def find(self, predicate: Callable[[InvocationRecord], bool], take: int) -> list[InvocationRecord]:
        """Up to `take` records the predicate accepts, newest first."""
        found: list[InvocationRecord] = []
        if take <= 0:
            return found
        for record in self.newest_first():
            if predicate(record):
                found.append(record)
                if len(found) >= take:
                    break
        return found

    def knn(self, query: Sequence[float] | Vector, k: int) -> list[tuple[InvocationRecord, float]]:
        """The k records with an embedding most similar to `query` (exact cosine), best first."""
        rows = np.flatnonzero(self._has_vector)
        if k <= 0 or rows.size == 0:
            return []
        picked = exact_top_k(unit_vector(query), self._vectors[rows], k)
        found = []
        for index, similarity in picked:
            record = self._records[int(rows[index])]
            if record is not None:
                found.append((record, similarity))
        return found

    def _store(self, slot: int, record: InvocationRecord) -> None:
        self._records[slot] = record
        if record.embedding:
            self._vectors[slot] = unit_vector(record.embedding)
            self._has_vector[slot] = True
        else:
            self._vectors[slot] = 0.0
            self._has_vector[slot] = False
