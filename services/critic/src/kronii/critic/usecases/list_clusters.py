"""The clusters of near-duplicate failures the nightly job kept (one file a day, within the
retention window), newest day first: what the console's Shell page shows beside the records."""

from __future__ import annotations

from kronii.critic.core.clusters import ClusterGroup
from kronii.critic.ports import ClusterShelf

__all__ = ["ListClusters"]


class ListClusters:
    def __init__(self, shelf: ClusterShelf) -> None:
        self._shelf = shelf

    def __call__(self, limit: int = 200) -> list[ClusterGroup]:
        groups = self._shelf.recent_clusters()
        return sorted(groups, key=lambda group: (group.day, group.cluster_id), reverse=True)[:limit]
