"""CriticOperations: the one facade the critic's HTTP routes and gRPC servicer call, arguments already
checked by api/. Each operation is one use case; a caller's mistake the API cannot see (no such
record, no failing command to compare with) is a KroniiError: NotFound."""

from __future__ import annotations

from collections.abc import AsyncIterator

from kronii.critic.core.clusters import ClusterGroup
from kronii.critic.core.commands import ExportQuery, Reported, SearchQuery, Similar, SimilarQuery
from kronii.critic.core.doctor import DoctorReport
from kronii.critic.core.model import InvocationEvent, InvocationRecord
from kronii.critic.core.retrieval import Hit
from kronii.critic.usecases.doctor import Doctor
from kronii.critic.usecases.export_records import ExportRecords
from kronii.critic.usecases.find_similar import FindSimilar
from kronii.critic.usecases.list_clusters import ListClusters
from kronii.critic.usecases.mute_hints import MuteHints
from kronii.critic.usecases.record_command import RecordCommand
from kronii.critic.usecases.search_records import SearchRecords

__all__ = ["CriticOperations"]


class CriticOperations:
    def __init__(
        self,
        *,
        record: RecordCommand,
        search: SearchRecords,
        similar: FindSimilar,
        export: ExportRecords,
        doctor: Doctor,
        mute: MuteHints,
        clusters: ListClusters | None = None,
    ) -> None:
        self._record = record
        self._search = search
        self._similar = similar
        self._export = export
        self._doctor = doctor
        self._mute = mute
        self._clusters = clusters

    async def report(self, event: InvocationEvent) -> Reported:
        """Redact, keep and evaluate one command from `kronii run` or a supervisor pane."""
        return await self._record.report(event)

    async def search(self, query: SearchQuery) -> list[Hit]:
        """Best first, at most ``query.take``."""
        return await self._search(query)

    async def similar(self, query: SimilarQuery) -> Similar:
        return await self._similar(query)

    def export(self, query: ExportQuery) -> AsyncIterator[InvocationRecord]:
        """The kept records from ``query.since_ms`` (0: all), oldest first; ``query.redact`` masks
        paths and personal data too, for sharing."""
        return self._export(query)

    async def doctor(self) -> DoctorReport:
        return await self._doctor()

    async def mute(self, seconds: int) -> int:
        """Mute hints for ``seconds`` (0 unmutes); the time they are muted until, in ms since the
        epoch (0 when not muted)."""
        return self._mute(seconds)

    def clusters(self) -> list[ClusterGroup]:
        """The kept clusters of similar failures, newest day first ([] where none are kept)."""
        return self._clusters() if self._clusters is not None else []
