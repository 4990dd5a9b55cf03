"""Snooze and disable over HTTP: POST /v1/notifications/{id}/snooze and /disable act on the
notification's source; GET /v1/controls lists what is in force; DELETE /v1/controls/{source_key}
undoes it. POST /v1/notifications/{id}/accept is the yes to the offer a notification made (the
supervisor's hand-over of a failure to an agent), as the bubble's button is."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from kronii.edge.api_edge import read_json_object
from kronii.edge.limits import PathId
from kronii.edge.openapi import errors, json_body
from kronii.foundation.errors import InvalidArgument
from kronii.pipeline.api.convert import control_json
from kronii.pipeline.api.source import OperationsSource

__all__ = ["DEFAULT_SNOOZE_SECS", "MAX_SNOOZE_SECS", "controls_router"]

DEFAULT_SNOOZE_SECS = 3600.0
MAX_SNOOZE_SECS = 7 * 86400.0


async def _snooze_secs(request: Request, default: float, maximum: float) -> float:
    if not await request.body():
        return default
    data = await read_json_object(request)
    value = data.get("duration_secs", default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= maximum:
        raise InvalidArgument(
            f"duration_secs must be a number of seconds between 1 and {maximum:.0f}", field="duration_secs"
        )
    return float(value)


def _snooze_body(max_snooze_secs: float) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "duration_secs": {"type": "number", "exclusiveMinimum": 0, "maximum": max_snooze_secs}
        },
    }


def controls_router(
    operations: OperationsSource,
    *,
    default_snooze_secs: float = DEFAULT_SNOOZE_SECS,
    max_snooze_secs: float = MAX_SNOOZE_SECS,
) -> APIRouter:
    """POST /v1/notifications/{id}/snooze (body {"duration_secs": N}, optional) and /disable act on
    the notification's source; GET /v1/controls lists what is in force; DELETE
    /v1/controls/{source_key} undoes it."""
    router = APIRouter(prefix="/v1", tags=["controls"])

    @router.post(
        "/notifications/{notification_id}/snooze",
        responses=errors(404, 409),
        openapi_extra=json_body(_snooze_body(max_snooze_secs), required=False),
    )
    async def snooze(notification_id: PathId, request: Request) -> dict[str, Any]:
        secs = await _snooze_secs(request, default_snooze_secs, max_snooze_secs)
        return control_json(await operations().snooze(notification_id, secs))

    @router.post("/notifications/{notification_id}/disable", responses=errors(404, 409))
    async def disable(notification_id: PathId) -> dict[str, Any]:
        return control_json(await operations().disable(notification_id))

    @router.post("/notifications/{notification_id}/accept", responses=errors(404))
    async def accept(notification_id: PathId) -> dict[str, Any]:
        offer_id = await operations().accept_offer(notification_id, "person:http")
        return {"notification_id": notification_id, "offer_id": offer_id, "accepted": True}

    @router.get("/controls")
    async def list_controls() -> dict[str, Any]:
        return {"controls": [control_json(control) for control in await operations().controls()]}

    @router.delete("/controls/{source_key}", responses=errors(404))
    async def clear_control(source_key: PathId) -> dict[str, Any]:
        await operations().clear_control(source_key)
        return {"source_key": source_key, "cleared": True}

    return router
