"""The Shell page: the critic's records, searched by meaning (the critic's own search, semantic when
its model is loaded, else its keywords) or by text (the words as written, matched in the records the
critic gives back), with the hint each raised, the failures like one record, and the clusters of
near-duplicate failures the critic's nightly job found."""

from __future__ import annotations

from dataclasses import dataclass, replace

from kronii.console.core.shell import Cluster, ShellHit, check_query, text_matches
from kronii.console.ports import CriticRecords
from kronii.foundation.errors import KroniiError

__all__ = ["SearchShell", "ShellView"]

# How many records a search shows, and how many "by text" reads from the critic to match in.
SHOWN = 50
TEXT_POOL = 500
SIMILAR = 10


@dataclass(frozen=True)
class ShellView:
    query: str
    mode: str
    failed_only: bool
    hits: tuple[ShellHit, ...]
    clusters: tuple[Cluster, ...]
    similar_to: str
    problems: tuple[str, ...]


class SearchShell:
    def __init__(self, critic: CriticRecords) -> None:
        self._critic = critic

    async def search(self, text: str, mode: str, failed_only: bool) -> ShellView:
        query, mode = check_query(text, mode)
        problems: list[str] = []
        hits: list[ShellHit] = []
        try:
            hits = await self._find(query, mode, failed_only)
        except KroniiError as error:
            problems.append(str(error))
        clusters = await self._clusters(problems)
        return ShellView(
            query, mode, failed_only, self._marked(hits, clusters), tuple(clusters), "", tuple(problems)
        )

    async def similar(self, record_id: str) -> ShellView:
        problems: list[str] = []
        hits: list[ShellHit] = []
        try:
            hits = await self._critic.similar(record_id, SIMILAR)
        except KroniiError as error:
            problems.append(str(error))
        clusters = await self._clusters(problems)
        return ShellView(
            "", "meaning", False, self._marked(hits, clusters), tuple(clusters), record_id, tuple(problems)
        )

    async def _find(self, query: str, mode: str, failed_only: bool) -> list[ShellHit]:
        if mode == "meaning" or not query:
            return await self._critic.search(query, SHOWN, failed_only)
        words = query.split()
        pool = await self._critic.search("", TEXT_POOL, failed_only)
        found = [hit for hit in pool if text_matches(hit.record, words)]
        return sorted(found, key=lambda hit: hit.record.at, reverse=True)[:SHOWN]

    async def _clusters(self, problems: list[str]) -> list[Cluster]:
        try:
            return await self._critic.clusters()
        except KroniiError as error:
            if not problems:
                problems.append(str(error))
            return []

    @staticmethod
    def _marked(hits: list[ShellHit], clusters: list[Cluster]) -> tuple[ShellHit, ...]:
        member = {rid: cluster.cluster_id for cluster in clusters for rid in cluster.record_ids}
        return tuple(
            replace(hit, cluster_id=member.get(hit.record.record_id, hit.cluster_id)) for hit in hits
        )
