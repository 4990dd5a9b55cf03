"""Snooze and disable over HTTP: POST /v1/notifications/{id}/snooze and /disable act on the
notification's source; GET /v1/controls lists what is in force; DELETE /v1/controls/{source_key}
undoes it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from kronii.common.api_edge import read_json_object
from kronii.common.errors import Conflict, InvalidArgument, NotFound
from kronii.common.limits import PathId
from kronii.common.openapi import errors, json_body
from kronii.pipeline.ports import ControlStore, NotificationLookup

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


async def _source_of(notifications: NotificationLookup, notification_id: str) -> str:
    message = await notifications.get(notification_id)
    if message is None:
        raise NotFound(f"no notification {notification_id!r}")
    if not message.source_key:
        raise Conflict(f"notification {notification_id!r} has no source to snooze or disable")
    return message.source_key


def _snooze_body(max_snooze_secs: float) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "duration_secs": {"type": "number", "exclusiveMinimum": 0, "maximum": max_snooze_secs}
        },
    }


def controls_router(
    notifications: NotificationLookup,
    controls: ControlStore,
    *,
    clock: Callable[[], float] = time.time,
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
        source_key = await _source_of(notifications, notification_id)
        now = clock()
        control = await controls.snooze(
            source_key, until=now + secs, now=now, notification_id=notification_id
        )
        return control.as_json()

    @router.post("/notifications/{notification_id}/disable", responses=errors(404, 409))
    async def disable(notification_id: PathId) -> dict[str, Any]:
        source_key = await _source_of(notifications, notification_id)
        control = await controls.disable(source_key, now=clock(), notification_id=notification_id)
        return control.as_json()

    @router.get("/controls")
    async def list_controls() -> dict[str, Any]:
        active = await controls.active(clock())
        return {
            "controls": [control.as_json() for control in sorted(active.values(), key=lambda c: c.source_key)]
        }

    @router.delete("/controls/{source_key}", responses=errors(404))
    async def clear_control(source_key: PathId) -> dict[str, Any]:
        if not await controls.clear(source_key):
            raise NotFound(f"nothing snoozed or disabled for {source_key!r}")
        return {"source_key": source_key, "cleared": True}

    return router
