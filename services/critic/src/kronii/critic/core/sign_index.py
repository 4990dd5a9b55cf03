"""The long tier's similar-record search in the critic's own process (pure: no I/O), chosen by
measurement (bench/critic_knn.py): one PostgreSQL round trip costs more than the whole search here.

Every record keeps two quantized copies of its unit embedding:

- its **sign code**: the sign of each of the 384 dimensions, 48 bytes (six 64-bit words, kept one
  array per word so each pass over the table reads contiguous memory);
- its **int8 vector**: each dimension rounded to a step of max(|x|) / 127, with that step as a
  float32 (388 bytes).

A search weighs each dimension of the query by how large it is there: |q| / sigma (sigma = 1/sqrt(384)
for a unit vector) rounded to a level 0-3 (thresholds 1/3, 1 and 5/3 sigma), written as two bit
planes. A record's distance is the sum of the levels of the dimensions whose sign differs from the
query's: two AND + popcount passes over the codes (numpy's bitwise_count). Plain Hamming distance
(every dimension weighs 1) needed ~10,000 candidates of 100,000 random rows to hold 95 % of a random
query's true five; the levels hold 98 % in 3,000. The ``candidates`` rows of least distance (found
from the histogram of the distances, no sort) are then scored exactly against their int8 vectors
(one gather and one matrix-vector product), and the best k returned with that cosine (within ~0.001
of the float32 one).

A near-duplicate (an error seen before, cosine > 0.8) differs from the query in few signs and is
always among the candidates; a random query, whose true nearest rows are barely above the noise
(~0.2 at 100,000 rows), is the hard case the candidate count is chosen for.

Filters: a RecordFilter's triggers, command name, failed and since are kept per row and honoured
here (the candidates are taken among the rows it accepts; when it accepts fewer rows than the
candidate count they are all scored exactly). Its ``text`` is not: the texts are not held in RAM,
so ``supports`` is False and the caller searches PostgreSQL instead.

Two cores search at once when two are free: the passes over the codes (one job per _CHUNK rows) and the
exact scoring (one per _RERANK_JOB candidates) are jobs that this thread and a helper thread take in turn
(numpy's loops let go of the GIL), each with scratch arrays of its own. The helper never holds a search
up: the jobs it has not taken by the time this thread runs out of them are done here, so on a busy
machine, where the helper waits for a core, a search costs what one thread's does.

Measured (bench/critic_knn.py, 100,000 random rows, two cores): 1.5-1.7 ms p50 for a random query,
p95 1.9-2.2 ms at load average 1.0-1.5 (one thread: 2.0-2.3 / 2.4-2.9 ms); the same answers as one
thread's. Recall@5 0.96 (0.945 with 2,000 candidates, 0.967 with 4,000: the int8 rounding costs ~2 %
against the candidates' 0.98), 1.0 on near-duplicates. On one thread the passes over the codes take
~1.1 ms, the int8 scoring ~0.2 ms per 1,000 candidates. Memory: 450 bytes a row (43 MiB at 100,000)
plus the ids (~10 MiB).

Not thread-safe: one owner (the event loop) searches and changes it.
"""

from __future__ import annotations

import itertools
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt
from kronii.critic.core.knn_plan import DEFAULT_CANDIDATES
from kronii.critic.core.model import EMBEDDING_DIM, InvocationRecord, Trigger
from kronii.critic.core.retrieval import RecordFilter, Vector, unit_vector

__all__ = ["DEFAULT_CANDIDATES", "IndexRows", "SignCodeIndex"]

_WORDS = EMBEDDING_DIM // 64
_INT8_STEPS = 127.0
# |q| / sigma times this, rounded and capped at _TOP_LEVEL, is a dimension's level (thresholds 1/3,
# 1 and 5/3 sigma): the best of the two-plane weightings measured on random queries.
_LEVEL_PER_SIGMA = 1.5
_TOP_LEVEL = 3
_CHUNK = 16_384  # rows scored per pass: the scratch words stay in the core's cache
_NOT_ALLOWED = _TOP_LEVEL * EMBEDDING_DIM + 1  # above any distance: a row the filter refuses
_SAMPLE_STRIDE = 4
_RERANK_JOB = 1_000  # candidates scored per job
_TRIGGERS = tuple(Trigger)
_TRIGGER_CODE = {trigger: code for code, trigger in enumerate(_TRIGGERS)}

Codes = npt.NDArray[np.uint64]


@dataclass(frozen=True)
class IndexRows:
    """Rows for the index, column by column (a bulk load reads them so): ``vectors`` is (n, 384)."""

    record_ids: list[str]
    vectors: Vector
    timestamps_ms: npt.NDArray[np.int64]
    triggers: list[Trigger]
    command_names: list[str]
    failed: npt.NDArray[np.bool_]

    def __len__(self) -> int:
        return len(self.record_ids)

    @staticmethod
    def of(records: Sequence[InvocationRecord]) -> IndexRows:
        """The records that have an embedding (the others cannot be searched by similarity)."""
        kept = [record for record in records if len(record.embedding) == EMBEDDING_DIM]
        vectors = np.asarray([record.embedding for record in kept], dtype=np.float32)
        vectors = vectors.reshape(len(kept), EMBEDDING_DIM)
        norms = np.linalg.norm(vectors, axis=1)
        usable = np.isfinite(norms) & (norms > 0)  # as unit_vector, which PostgreSQL's writer calls
        if not usable.all():
            kept = [record for record, ok in zip(kept, usable, strict=True) if ok]
            vectors = vectors[usable]
        return IndexRows(
            record_ids=[record.record_id for record in kept],
            vectors=vectors,
            timestamps_ms=np.asarray([record.timestamp_ms for record in kept], dtype=np.int64),
            triggers=[record.trigger for record in kept],
            command_names=[record.command_name for record in kept],
            failed=np.asarray([record.failed for record in kept], dtype=bool),
        )


def _sign_words(vectors: Vector) -> Codes:
    """(n, 384) -> (n, 6) words of sign bits (the same packing for rows, queries and masks)."""
    packed = np.packbits(vectors > 0, axis=1)
    words: Codes = np.ascontiguousarray(packed).view(np.uint64)
    return words


_Column = TypeVar("_Column", bound=np.generic)


def _grown(column: npt.NDArray[_Column], used: int, capacity: int) -> npt.NDArray[_Column]:
    larger = np.zeros((capacity, *column.shape[1:]), dtype=column.dtype)
    larger[:used] = column[:used]
    return larger


def _unit_rows(vectors: Vector) -> Vector:
    rows = np.asarray(vectors, dtype=np.float32).reshape(-1, EMBEDDING_DIM)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    if not np.all(np.isfinite(norms)) or np.any(norms == 0.0):
        raise ValueError("an embedding must be finite and non-zero")
    unit: Vector = (rows / norms).astype(np.float32)
    return unit


class _Scratch:
    """One thread's working arrays for the passes over the codes (kept: allocating them per search costs)."""

    def __init__(self) -> None:
        self.xor = np.empty((_WORDS, _CHUNK), dtype=np.uint64)
        self.masked = np.empty((_WORDS, _CHUNK), dtype=np.uint64)
        self.low = np.empty((_WORDS, _CHUNK), dtype=np.uint8)
        self.high = np.empty((_WORDS, _CHUNK), dtype=np.uint8)


class SignCodeIndex:
    """Record id -> (sign code, int8 vector, filter facts); dense arrays, a removed row's slot
    taken by the last row."""

    def __init__(self, candidates: int = DEFAULT_CANDIDATES, capacity: int = 1024) -> None:
        if candidates < 1:
            raise ValueError(f"candidates must be 1 or more, not {candidates}")
        self.candidates = candidates
        self._size = 0
        self._ids: list[str] = []
        self._slot_of: dict[str, int] = {}
        self._command_code: dict[str, int] = {}
        capacity = max(capacity, 1)
        self._codes: Codes = np.zeros((_WORDS, capacity), dtype=np.uint64)
        self._quantized = np.zeros((capacity, EMBEDDING_DIM), dtype=np.int8)
        self._steps = np.zeros(capacity, dtype=np.float32)
        self._timestamps = np.zeros(capacity, dtype=np.int64)
        self._triggers = np.zeros(capacity, dtype=np.uint8)
        self._commands = np.zeros(capacity, dtype=np.int32)
        self._failed = np.zeros(capacity, dtype=bool)
        self._scratch = (_Scratch(), _Scratch())
        self._distance_rows = np.empty(0, dtype=np.uint16)
        self._helper: ThreadPoolExecutor | None = None  # the helper thread, made at the first shared search

    def _grow(self) -> None:
        """Twice the rows (the codes grow along their second axis: one array per word)."""
        used, capacity = self._size, 2 * self._codes.shape[1]
        codes = np.zeros((_WORDS, capacity), dtype=np.uint64)
        codes[:, :used] = self._codes[:, :used]
        self._codes = codes
        self._quantized = _grown(self._quantized, used, capacity)
        self._steps = _grown(self._steps, used, capacity)
        self._timestamps = _grown(self._timestamps, used, capacity)
        self._triggers = _grown(self._triggers, used, capacity)
        self._commands = _grown(self._commands, used, capacity)
        self._failed = _grown(self._failed, used, capacity)

    def __len__(self) -> int:
        return self._size

    def __contains__(self, record_id: object) -> bool:
        return record_id in self._slot_of

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays per row held (codes, int8 vectors, steps, facts) times the rows:
        the capacity's spare rows and the ids' Python strings are not counted."""
        per_row = _WORDS * 8 + EMBEDDING_DIM + 4 + 8 + 1 + 4 + 1
        return per_row * self._size

    @property
    def ids_nbytes(self) -> int:
        """Bytes of the ids' Python strings, their list and the id -> row dict (CPython's sizes)."""
        strings = sum(sys.getsizeof(record_id) for record_id in self._ids)
        return strings + sys.getsizeof(self._ids) + sys.getsizeof(self._slot_of)

    # ---- changes ---------------------------------------------------------------------------

    def upsert(self, rows: IndexRows) -> None:
        """Add the rows, or replace those whose id is already held."""
        if not len(rows):
            return
        vectors = _unit_rows(rows.vectors)
        slots = np.empty(len(rows), dtype=np.int64)
        for position, record_id in enumerate(rows.record_ids):
            slot = self._slot_of.get(record_id)
            if slot is None:
                slot = self._append_slot(record_id)
            slots[position] = slot
        steps = np.abs(vectors).max(axis=1) / _INT8_STEPS
        self._codes[:, slots] = _sign_words(vectors).T
        self._quantized[slots] = np.rint(vectors / steps[:, None]).astype(np.int8)
        self._steps[slots] = steps
        self._timestamps[slots] = rows.timestamps_ms
        self._triggers[slots] = [_TRIGGER_CODE[trigger] for trigger in rows.triggers]
        self._commands[slots] = [self._command(name) for name in rows.command_names]
        self._failed[slots] = rows.failed

    def _append_slot(self, record_id: str) -> int:
        if self._size == self._codes.shape[1]:
            self._grow()
        slot = self._size
        self._size += 1
        self._ids.append(record_id)
        self._slot_of[record_id] = slot
        return slot

    def _command(self, name: str) -> int:
        return self._command_code.setdefault(name, len(self._command_code))

    def remove(self, record_ids: Sequence[str]) -> int:
        """Forget these ids (those held); returns how many went."""
        removed = 0
        for record_id in record_ids:
            slot = self._slot_of.pop(record_id, None)
            if slot is None:
                continue
            last = self._size - 1
            if slot != last:
                self._move(last, slot)
            self._ids.pop()
            self._size = last
            removed += 1
        return removed

    def _move(self, source: int, target: int) -> None:
        moved = self._ids[source]
        self._ids[target] = moved
        self._slot_of[moved] = target
        self._codes[:, target] = self._codes[:, source]
        for column in (
            self._quantized, self._steps, self._timestamps, self._triggers, self._commands, self._failed,
        ):  # fmt: skip
            column[target] = column[source]

    def remove_before(self, before_ms: int) -> int:
        """Forget the rows older than ``before_ms`` (what a prune deletes); returns how many went."""
        old = np.flatnonzero(self._timestamps[: self._size] < before_ms)
        return self.remove([self._ids[int(slot)] for slot in old])

    # ---- search ----------------------------------------------------------------------------

    @staticmethod
    def supports(record_filter: RecordFilter | None) -> bool:
        """False for a filter on text, which only PostgreSQL can apply (the texts are not here)."""
        return record_filter is None or not record_filter.text

    def search(
        self, embedding: Sequence[float] | Vector, k: int, record_filter: RecordFilter | None = None
    ) -> list[tuple[str, float]]:
        """The k held records most similar to ``embedding`` that ``record_filter`` accepts, as
        (record id, cosine of the int8 vector), best first."""
        if not self.supports(record_filter):
            raise ValueError("a filter on text is searched in PostgreSQL, not in the index")
        if k <= 0 or self._size == 0:
            return []
        query = unit_vector(embedding)
        allowed = None if record_filter is None else self._accepted(record_filter)
        count = self._size if allowed is None else int(np.count_nonzero(allowed))
        wanted = max(self.candidates, k)
        if count <= wanted:
            rows = np.arange(self._size) if allowed is None else np.flatnonzero(allowed)
        else:
            rows = self._nearest_codes(query, wanted, allowed)
        return self._rerank(query, rows, k)

    def _accepted(self, record_filter: RecordFilter) -> npt.NDArray[np.bool_]:
        size = self._size
        allowed = np.ones(size, dtype=bool)
        if record_filter.triggers:
            codes = [_TRIGGER_CODE[trigger] for trigger in record_filter.triggers]
            allowed &= np.isin(self._triggers[:size], codes)
        if record_filter.command_name is not None:
            code = self._command_code.get(record_filter.command_name, -1)
            allowed &= self._commands[:size] == code
        if record_filter.failed is not None:
            allowed &= self._failed[:size] == record_filter.failed
        if record_filter.since_ms is not None:
            allowed &= self._timestamps[:size] >= record_filter.since_ms
        return allowed

    def _nearest_codes(
        self, query: Vector, wanted: int, allowed: npt.NDArray[np.bool_] | None
    ) -> npt.NDArray[np.intp]:
        """The ``wanted`` rows (rarely a few fewer, when the sampled histogram put the cut low) of
        least weighted sign distance to the query, among the allowed ones, in row order."""
        distances = self._distances(query)
        if allowed is not None:
            distances[~allowed] = _NOT_ALLOWED
        # The cut from the histogram of every _SAMPLE_STRIDE-th row when there are many (a quarter
        # of the work), aimed 10 % high for the sample's error; the surplus is trimmed below.
        sampled = distances.size >= 16 * wanted
        stride = _SAMPLE_STRIDE if sampled else 1
        aim = -(-wanted * (11 if sampled else 10) // (10 * stride))
        counts = np.cumsum(np.bincount(distances[::stride]))
        cut = int(np.searchsorted(counts, aim))
        rows = np.flatnonzero(distances <= cut)
        if rows.size > wanted:  # the rows tied at the cut, and the sample's error: scored for nothing
            rows = np.sort(rows[np.argpartition(distances[rows], wanted - 1)[:wanted]])
        return rows

    def _distances(self, query: Vector) -> npt.NDArray[np.uint16]:
        """Per row: the sum of the query's levels over the dimensions whose sign differs."""
        levels = np.minimum(
            np.rint(np.abs(query) * (_LEVEL_PER_SIGMA * np.sqrt(EMBEDDING_DIM))), _TOP_LEVEL
        ).astype(np.uint8)
        planes = np.stack([levels & 1, levels & 2]).astype(bool)
        signs = _sign_words(query[None, :])[0][:, None]
        low_mask, high_mask = (words[:, None] for words in _sign_words(planes))
        if self._distance_rows.size < self._size:
            self._distance_rows = np.empty(self._codes.shape[1], dtype=np.uint16)
        distances = self._distance_rows[: self._size]

        def chunk(first: int) -> Callable[[_Scratch], None]:
            stop = min(first + _CHUNK, self._size)
            return lambda scratch: self._weigh(first, stop, signs, low_mask, high_mask, distances, scratch)

        self._share([chunk(first) for first in range(0, self._size, _CHUNK)])
        return distances

    def _weigh(
        self,
        start: int,
        stop: int,
        signs: Codes,
        low_mask: Codes,
        high_mask: Codes,
        distances: npt.NDArray[np.uint16],
        scratch: _Scratch,
    ) -> None:
        width = stop - start
        xor, masked = scratch.xor[:, :width], scratch.masked[:, :width]
        low, high = scratch.low[:, :width], scratch.high[:, :width]
        np.bitwise_xor(self._codes[:, start:stop], signs, out=xor)
        np.bitwise_and(xor, low_mask, out=masked)
        np.bitwise_count(masked, out=low)
        np.bitwise_and(xor, high_mask, out=masked)
        np.bitwise_count(masked, out=high)
        # low + 2 high <= 3 x 64 per word: still a byte (two adds: numpy's uint8 shift is slow)
        np.add(low, high, out=low)
        np.add(low, high, out=low)
        np.sum(low, axis=0, dtype=np.uint16, out=distances[start:stop])

    def _share(self, jobs: Sequence[Callable[[_Scratch], None]]) -> None:
        """Every job done when this returns, each by this thread or the helper, whichever takes it first;
        this thread waits for the helper only while it is in the middle of one."""
        if len(jobs) < 2:
            for job in jobs:
                job(self._scratch[0])
            return
        taken, busy = itertools.count(), threading.Lock()

        def take_turns() -> None:
            while True:
                with busy:  # held from taking a job to its end, so the wait below covers it
                    index = next(taken)
                    if index >= len(jobs):
                        return
                    jobs[index](self._scratch[1])

        if self._helper is None:
            self._helper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="critic-similar")
        self._helper.submit(take_turns)
        while (index := next(taken)) < len(jobs):
            jobs[index](self._scratch[0])
        with busy:  # the helper's job under way, if any, is done
            pass

    def _rerank(self, query: Vector, rows: npt.NDArray[np.intp], k: int) -> list[tuple[str, float]]:
        if rows.size == 0:
            return []
        similarities = np.empty(rows.size, dtype=np.float32)

        def score(first: int) -> Callable[[_Scratch], None]:
            def job(_scratch: _Scratch) -> None:
                chosen = rows[first : first + _RERANK_JOB]
                scores = self._quantized[chosen].astype(np.float32) @ query
                similarities[first : first + _RERANK_JOB] = scores * self._steps[chosen]

            return job

        self._share([score(first) for first in range(0, rows.size, _RERANK_JOB)])
        take = min(k, rows.size)
        best = np.argpartition(-similarities, take - 1)[:take]
        best = best[np.argsort(-similarities[best], kind="stable")]
        return [(self._ids[int(rows[i])], float(similarities[i])) for i in best]
