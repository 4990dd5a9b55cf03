"""The pipeline's runs and the snoozes and mutes on its notifications' sources, for the Decisions
page (PipelineDecisions), over the console's service clients: GET /v1/runs (newest first, paged by
`before`), GET /v1/controls, POST /v1/notifications/{id}/snooze and /disable (the pipeline's mute),
DELETE /v1/controls/{source_key}, and a person's delete of runs (DELETE /v1/runs). What the pipeline keeps of a run is already redacted (its trigger's
summary, its notes); nothing else is read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from kronii.console.core.decisions import Control, Decision, RoleRun
from kronii.console.deps import ServiceClients
from kronii.console.ports import ServiceNotAnswering
from kronii.foundation.errors import NotFound

__all__ = ["PipelineApi", "control_of", "decision_of"]

SERVICE = "pipeline"


def _role(data: Mapping[str, Any]) -> RoleRun:
    return RoleRun(
        role=str(data.get("role", "")),
        backend=str(data.get("backend", "")),
        model=str(data.get("model", "")),
        outcome=str(data.get("outcome", "")),
        fallback=str(data.get("fallback", "")),
        cost=float(data.get("cost_estimate", 0.0) or 0.0),
        latency_ms=int(data.get("latency_ms", 0) or 0),
    )


def decision_of(data: Mapping[str, Any]) -> Decision:
    duration = data.get("duration_ms")
    return Decision(
        run_id=str(data["run_id"]),
        created_at=float(data.get("created_at", 0.0)),
        trigger=str(data.get("trigger_summary", "")),
        route=str(data.get("route", "")),
        redaction_level=str(data.get("redaction_level", "")),
        roles=tuple(_role(call) for call in data.get("model_calls", [])),
        cost=float(data.get("cost_estimate", 0.0) or 0.0),
        decision=str(data.get("decision", "")),
        notes=tuple(str(note) for note in data.get("notes", [])),
        notification_id=str(data.get("notification_id", "")),
        states=tuple(str(visit.get("state", "")) for visit in data.get("states", [])),
        duration_ms=None if duration is None else int(duration),
    )


def control_of(data: Mapping[str, Any]) -> Control:
    until = data.get("snoozed_until")
    return Control(
        source_key=str(data.get("source_key", "")),
        snoozed_until=None if until is None else float(until),
        muted=bool(data.get("disabled", False)),
        notification_id=str(data.get("notification_id", "")),
    )


def _forgotten(body: Mapping[str, Any]) -> tuple[int, int]:
    return int(body.get("deleted_runs", 0)), int(body.get("deleted_notifications", 0))


class PipelineApi:
    def __init__(self, services: ServiceClients) -> None:
        self._services = services

    async def runs(self, limit: int, before: float | None) -> tuple[list[Decision], float | None]:
        body = await self._services.get_json(SERVICE, "/v1/runs", {"limit": limit, "before": before})
        following = body.get("next_before")
        return [decision_of(run) for run in body.get("runs", [])], None if following is None else float(
            following
        )

    async def controls(self) -> list[Control]:
        body = await self._services.get_json(SERVICE, "/v1/controls")
        return [control_of(item) for item in body.get("controls", [])]

    async def snooze(self, notification_id: str, seconds: int) -> Control:
        path = f"/v1/notifications/{quote(notification_id, safe='')}/snooze"
        return control_of(await self._acted(path, {"duration_secs": seconds}))

    async def mute(self, notification_id: str) -> Control:
        path = f"/v1/notifications/{quote(notification_id, safe='')}/disable"
        return control_of(await self._acted(path, None))

    async def clear(self, source_key: str) -> None:
        try:
            await self._services.delete_json(SERVICE, f"/v1/controls/{quote(source_key, safe='')}")
        except ServiceNotAnswering as error:
            raise (
                NotFound("nothing is in force on that source any more") if error.status == 404 else error
            ) from None

    async def forget_between(self, since: float, until: float) -> tuple[int, int]:
        return _forgotten(
            await self._services.delete_json(SERVICE, "/v1/runs", {"since": since, "until": until})
        )

    async def forget_all(self) -> tuple[int, int]:
        return _forgotten(await self._services.delete_json(SERVICE, "/v1/runs", {"all": "true"}))

    async def _acted(self, path: str, body: Any) -> Any:
        try:
            return await self._services.post_json(SERVICE, path, body)
        except ServiceNotAnswering as error:
            if error.status == 404:
                raise NotFound("the pipeline no longer knows that notification") from None
            raise
