"""Retrieval over the tiered memory (seed 003, "C. Retrieval"): cosine over unit vectors, exact
top-k, the hybrid score, predicate filters and the merge of near-duplicates. Pure: time is passed in.

The hybrid score of a past record against the current invocation is

    similarity + same_trigger + same_command + same_project + recency * 0.5 ** (age / half_life)

where each boost counts only when the record shares that property. All additive, so a boost can lift
a slightly less similar record above a more similar one (the point of a boost) but never turns an
unrelated one into a match: the defaults keep the sum of the boosts (0.35) below the gap between a
related error (cosine ~0.7-0.95) and an unrelated one (~0.1-0.3).

A *project* is a pure function of the cwd, so it works on redacted paths and costs no I/O: the
home directory (``/home/<user>``, ``/Users/<user>``, ``/root``, ``~``) becomes ``~``, and the project
is the first two path parts below it: ``/home/[USERNAME_1]/src/kronii/services`` -> ``~/src/kronii``,
``/etc/nginx/sites-enabled`` -> ``/etc/nginx``. A git root would be more exact but needs the file
system at scoring time, and shells report only the cwd.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
import numpy.typing as npt
from kronii.critic.core.model import EMBEDDING_DIM, InvocationRecord, Trigger

__all__ = [
    "Hit",
    "HybridWeights",
    "QueryContext",
    "RecordFilter",
    "Vector",
    "by_command",
    "by_trigger",
    "cosine",
    "exact_top_k",
    "failed",
    "hybrid_score",
    "merge_near_duplicates",
    "project_of",
    "rank",
    "since",
    "text_contains",
    "unit_vector",
]

Vector = npt.NDArray[np.float32]
_T = TypeVar("_T")
DAY_MS = 86_400_000
_HOME_PREFIXES = ("/home/", "/Users/")


@dataclass(frozen=True)
class Hit:
    record: InvocationRecord
    similarity: float  # cosine, -1..1 (1 for an exact keyword hit without embeddings)
    score: float  # the hybrid score the results are ordered by
    tier: str  # "ram" | "disk" (PostgreSQL's HNSW index)


@dataclass(frozen=True)
class HybridWeights:
    same_trigger: float = 0.05
    same_command: float = 0.10
    same_project: float = 0.05
    recency: float = 0.15
    half_life_days: float = 7.0


@dataclass(frozen=True)
class QueryContext:
    """What the current invocation is, for the boosts; empty fields never match."""

    now_ms: int
    trigger: Trigger | None = None
    command_name: str = ""
    cwd: str = ""


def unit_vector(values: Sequence[float] | Vector) -> Vector:
    """The vector scaled to length 1 (float32); a zero or wrongly sized vector raises ValueError."""
    vector = np.asarray(values, dtype=np.float32)
    if vector.shape != (EMBEDDING_DIM,):
        raise ValueError(f"an embedding has {EMBEDDING_DIM} values, not {vector.shape}")
    norm = float(np.linalg.norm(vector))
    if not np.isfinite(norm) or norm == 0.0:
        raise ValueError("an embedding must be finite and non-zero")
    return (vector / norm).astype(np.float32)


def cosine(a: Vector, b: Vector) -> float:
    """Cosine of two unit vectors: their dot product."""
    return float(np.dot(a, b))


def exact_top_k(query: Vector, matrix: Vector, k: int) -> list[tuple[int, float]]:
    """Row indexes of the k rows of `matrix` (unit vectors) most similar to `query`, best first."""
    if k <= 0 or matrix.shape[0] == 0:
        return []
    similarities = matrix @ query
    take = min(k, similarities.shape[0])
    picked = np.argpartition(-similarities, take - 1)[:take]
    ordered = picked[np.argsort(-similarities[picked], kind="stable")]
    return [(int(index), float(similarities[index])) for index in ordered]


def project_of(cwd: str) -> str:
    """The project a cwd belongs to (see the module doc): the first two parts below home or root."""
    path = cwd.rstrip("/") or "/"
    if path == "~" or path.startswith("~/"):
        rest = path[2:]
        prefix = "~"
    elif path == "/root" or path.startswith("/root/"):
        rest, prefix = path[len("/root/") :], "~"
    elif path.startswith(_HOME_PREFIXES):
        parts = path.split("/", 3)  # "", "home", user, rest
        rest, prefix = (parts[3] if len(parts) > 3 else ""), "~"
    else:
        rest, prefix = path.lstrip("/"), ""
    head = [part for part in rest.split("/") if part][:2]
    return prefix + "/" + "/".join(head) if head or not prefix else prefix


def _recency(age_ms: int, weights: HybridWeights) -> float:
    if weights.recency == 0.0:
        return 0.0
    half_life_ms = max(weights.half_life_days * DAY_MS, 1.0)
    decay: float = 0.5 ** (max(age_ms, 0) / half_life_ms)
    return weights.recency * decay


def hybrid_score(
    similarity: float, record: InvocationRecord, context: QueryContext, weights: HybridWeights
) -> float:
    score = similarity + _recency(context.now_ms - record.timestamp_ms, weights)
    if context.trigger is not None and record.trigger == context.trigger:
        score += weights.same_trigger
    if context.command_name and record.command_name == context.command_name:
        score += weights.same_command
    if context.cwd and record.cwd and project_of(record.cwd) == project_of(context.cwd):
        score += weights.same_project
    return score


def _merge_key(record: InvocationRecord, cluster_of: Mapping[str, str]) -> str:
    cluster = cluster_of.get(record.record_id)
    if cluster is not None:
        return "cluster:" + cluster
    # Without a nightly cluster yet (today's records), the same line failing the same way is one.
    return "\x1f".join(("text", record.command_line, record.error_type, record.error_message))


def merge_near_duplicates(hits: Iterable[Hit], cluster_of: Mapping[str, str]) -> list[Hit]:
    """The best-scored hit of each group of near-duplicates, in score order: one cluster of the
    nightly job is one group, and so are records with the same line and the same error."""
    best: dict[str, Hit] = {}
    for hit in hits:
        key = _merge_key(hit.record, cluster_of)
        kept = best.get(key)
        if kept is None or hit.score > kept.score:
            best[key] = hit
    return sorted(best.values(), key=lambda hit: hit.score, reverse=True)


def rank(
    candidates: Iterable[tuple[InvocationRecord, float, str]],
    context: QueryContext,
    weights: HybridWeights,
    k: int,
    cluster_of: Mapping[str, str] | None = None,
) -> list[Hit]:
    """Top k by hybrid score of (record, similarity, tier) candidates from any tiers: one hit per
    record id (the RAM tier's when both have it), near-duplicates merged."""
    by_id: dict[str, Hit] = {}
    for record, similarity, tier in candidates:
        hit = Hit(record, similarity, hybrid_score(similarity, record, context, weights), tier)
        kept = by_id.get(record.record_id)
        if kept is None or (kept.tier != "ram" and tier == "ram"):
            by_id[record.record_id] = hit
    return merge_near_duplicates(by_id.values(), cluster_of or {})[: max(k, 0)]


@dataclass(frozen=True)
class RecordFilter:
    """A predicate over records that the PostgreSQL tier can also run as SQL; combine with ``&``.
    Empty fields match everything. ``text`` is a case-insensitive substring of the command line,
    the error message or the summary."""

    triggers: frozenset[Trigger] = field(default_factory=frozenset)
    command_name: str | None = None
    failed: bool | None = None
    since_ms: int | None = None
    text: str = ""

    def __call__(self, record: InvocationRecord) -> bool:
        if self.triggers and record.trigger not in self.triggers:
            return False
        if self.command_name is not None and record.command_name != self.command_name:
            return False
        if self.failed is not None and record.failed != self.failed:
            return False
        if self.since_ms is not None and record.timestamp_ms < self.since_ms:
            return False
        if self.text:
            needle = self.text.casefold()
            haystacks = (record.command_line, record.error_message, record.summary)
            return any(needle in haystack.casefold() for haystack in haystacks)
        return True

    def __and__(self, other: RecordFilter) -> RecordFilter:
        return RecordFilter(
            triggers=_both_sets(self.triggers, other.triggers),
            command_name=_both(self.command_name, other.command_name, "command name"),
            failed=_both(self.failed, other.failed, "failed"),
            since_ms=max(
                (value for value in (self.since_ms, other.since_ms) if value is not None), default=None
            ),
            text=_both(self.text or None, other.text or None, "text") or "",
        )


def _both_sets(a: frozenset[Trigger], b: frozenset[Trigger]) -> frozenset[Trigger]:
    if a and b:
        common = a & b
        if not common:
            raise ValueError("the two filters want different triggers: nothing could match")
        return common
    return a or b


def _both(a: _T | None, b: _T | None, what: str) -> _T | None:
    if a is not None and b is not None and a != b:
        raise ValueError(f"the two filters want a different {what}: nothing could match")
    return a if a is not None else b


def by_trigger(*triggers: Trigger) -> RecordFilter:
    return RecordFilter(triggers=frozenset(triggers))


def by_command(name: str) -> RecordFilter:
    return RecordFilter(command_name=name)


def failed(value: bool = True) -> RecordFilter:
    return RecordFilter(failed=value)


def since(timestamp_ms: int) -> RecordFilter:
    return RecordFilter(since_ms=timestamp_ms)


def text_contains(text: str) -> RecordFilter:
    return RecordFilter(text=text)
