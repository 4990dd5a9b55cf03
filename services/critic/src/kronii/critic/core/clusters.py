"""The nightly clustering of near-duplicate errors (seed 003, "Cluster: nightly job"): greedy
leader clustering over unit vectors. Taken in the order given (oldest first), each vector joins the
group whose leader it is closest to when that cosine is above the threshold, or leads a new group. One pass,
O(records x groups): a day's failures are hundreds, not millions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from kronii.critic.core.model import EMBEDDING_DIM
from kronii.critic.core.retrieval import unit_vector

__all__ = ["DEFAULT_CLUSTER_THRESHOLD", "ClusterGroup", "greedy_clusters", "groups_of"]

DEFAULT_CLUSTER_THRESHOLD = 0.92


def greedy_clusters(
    items: Sequence[tuple[str, Sequence[float]]], threshold: float = DEFAULT_CLUSTER_THRESHOLD
) -> list[list[str]]:
    """Groups of at least two ids whose vectors are near-duplicates of the group's first (leader).
    Ids with no near-duplicate are left out."""
    leaders = np.zeros((max(len(items), 1), EMBEDDING_DIM), dtype=np.float32)
    groups: list[list[str]] = []
    for record_id, values in items:
        vector = unit_vector(values)
        if groups:
            similarities = leaders[: len(groups)] @ vector
            best = int(np.argmax(similarities))
            if float(similarities[best]) > threshold:
                groups[best].append(record_id)
                continue
        leaders[len(groups)] = vector
        groups.append([record_id])
    return [group for group in groups if len(group) > 1]


@dataclass(frozen=True)
class ClusterGroup:
    """One kept cluster (clusters-YYYYMMDD.json): its day, its leader's command and error (redacted
    like every record), and the ids of its records."""

    cluster_id: str
    day: str
    command_line: str
    error_message: str
    record_ids: tuple[str, ...]


def groups_of(content: Mapping[str, Any]) -> list[ClusterGroup]:
    """The groups of one day's clusters file, as written by the nightly job."""
    day = str(content.get("day", ""))
    return [
        ClusterGroup(
            cluster_id=str(group.get("cluster_id", "")),
            day=day,
            command_line=str(group.get("command_line", "")),
            error_message=str(group.get("error_message", "")),
            record_ids=tuple(str(rid) for rid in group.get("record_ids", [])),
        )
        for group in content.get("groups", [])
        if isinstance(group, Mapping)
    ]
