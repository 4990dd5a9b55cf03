"""The nightly clustering of near-duplicate errors (seed 003, "Cluster: nightly job"): greedy
leader clustering over unit vectors. Taken in the order given (oldest first), each vector joins the
group whose leader it is closest to when that cosine is above the threshold, or leads a new group. One pass,
O(records x groups): a day's failures are hundreds, not millions."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from kronii.critic.core.model import EMBEDDING_DIM
from kronii.critic.core.retrieval import unit_vector

__all__ = ["DEFAULT_CLUSTER_THRESHOLD", "greedy_clusters"]

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
