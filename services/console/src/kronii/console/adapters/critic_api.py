"""The critic's kept shell records for the Shell page (CriticRecords), over the console's service
clients: GET /v1/critic/search (the critic's own search: by meaning when its model is there, else by
keywords), GET /v1/critic/similar (failures like one record) and GET /v1/critic/clusters (the nightly
groups of near-duplicate failures). The critic redacts every record before it keeps it; nothing else
is read."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from kronii.console.core.shell import Cluster, ShellHit, ShellRecord
from kronii.console.deps import ServiceClients
from kronii.console.ports import ServiceNotAnswering
from kronii.foundation.errors import NotFound

__all__ = ["CriticApi", "hit_of", "record_of"]

SERVICE = "critic"


def _epoch(text: Any) -> float:
    if not text:
        return 0.0
    return datetime.fromisoformat(str(text).replace("Z", "+00:00")).timestamp()


def record_of(data: Mapping[str, Any]) -> ShellRecord:
    return ShellRecord(
        record_id=str(data.get("record_id", "")),
        at=_epoch(data.get("timestamp")),
        command_line=str(data.get("command_line", "")),
        cwd=str(data.get("cwd", "")),
        exit_status=int(data.get("exit_status", 0) or 0),
        duration_ms=int(data.get("duration_ms", 0) or 0),
        shell=str(data.get("shell", "")),
        trigger=str(data.get("trigger", "")),
        error_type=str(data.get("error_type", "")),
        error_message=str(data.get("error_message", "")),
        summary=str(data.get("summary", "")),
        redactions=int(data.get("redactions", 0) or 0),
    )


def hit_of(data: Mapping[str, Any], clusters: Mapping[str, str]) -> ShellHit:
    record = record_of(data.get("record") or {})
    return ShellHit(
        record=record,
        similarity=float(data.get("similarity", 0.0) or 0.0),
        score=float(data.get("score", 0.0) or 0.0),
        tier=str(data.get("tier", "")),
        cluster_id=clusters.get(record.record_id, ""),
    )


class CriticApi:
    def __init__(self, services: ServiceClients) -> None:
        self._services = services

    async def search(self, text: str, take: int, failed_only: bool) -> list[ShellHit]:
        params = {"text": text, "take": take, "failed_only": "true" if failed_only else None}
        body = await self._services.get_json(SERVICE, "/v1/critic/search", params)
        return [hit_of(hit, {}) for hit in body.get("hits", [])]

    async def similar(self, record_id: str, k: int) -> list[ShellHit]:
        try:
            body = await self._services.get_json(
                SERVICE, "/v1/critic/similar", {"record_id": record_id, "k": k}
            )
        except ServiceNotAnswering as error:
            if error.status == 404:
                raise NotFound("the critic no longer keeps that record") from None
            raise
        return [hit_of(hit, {}) for hit in body.get("hits", [])]

    async def clusters(self) -> list[Cluster]:
        try:
            body = await self._services.get_json(SERVICE, "/v1/critic/clusters")
        except ServiceNotAnswering as error:
            if error.status == 404:  # a critic from before the clusters route
                return []
            raise
        return [
            Cluster(
                cluster_id=str(group.get("cluster_id", "")),
                day=str(group.get("day", "")),
                command_line=str(group.get("command_line", "")),
                error_message=str(group.get("error_message", "")),
                record_ids=tuple(str(rid) for rid in group.get("record_ids", [])),
            )
            for group in body.get("clusters", [])
        ]
