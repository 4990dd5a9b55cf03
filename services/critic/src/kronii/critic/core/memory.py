"""The tiered memory's values (core): its options, its counts, what a retention run did."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import date

from kronii.critic.core.clusters import DEFAULT_CLUSTER_THRESHOLD
from kronii.critic.core.retention import DEFAULT_RETENTION_DAYS
from kronii.critic.core.retrieval import HybridWeights
from kronii.critic.core.ring import DEFAULT_RING_SIZE

__all__ = ["MemoryCounts", "MemoryOptions", "RetentionDone"]


@dataclass(frozen=True)
class MemoryOptions:
    ring_size: int = DEFAULT_RING_SIZE
    retention_days: int = DEFAULT_RETENTION_DAYS
    weights: HybridWeights = dataclasses.field(default_factory=HybridWeights)
    ram_enough: float = 0.8  # a RAM hit this similar counts towards answering without PostgreSQL
    candidates_per_k: int = 4
    disk_window_days: int = 2  # the day files searched by KNN while PostgreSQL is away
    retry_secs: float = 5.0
    db_timeout_secs: float = 5.0
    batch_size: int = 500
    cluster_threshold: float = DEFAULT_CLUSTER_THRESHOLD


@dataclass(frozen=True)
class MemoryCounts:
    ram: int
    queued: int
    in_step: bool  # PostgreSQL holds every journaled record
    journal_failures: int
    database_failures: int
    replayed: int
    lost: int
    waiting: int = 0  # records kept that wait for room in the day files


@dataclass(frozen=True)
class RetentionDone:
    archived_days: tuple[date, ...]
    pruned_rows: int | None  # None: PostgreSQL was away (tried again next time)
