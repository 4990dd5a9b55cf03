"""Snooze and disable, per source (an app, a plugin, a rule: whatever a notification's source_key
names), in PostgreSQL; the HTTP entry points POST /v1/notifications/{id}/snooze and /disable; and
the pure check the core calls before it notifies: "is this source muted now?"."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Request
from kronii.common.api_edge import read_json_object
from kronii.common.errors import Conflict, InvalidArgument, NotFound
from kronii.common.limits import PathId
from kronii.common.openapi import errors, json_body
from kronii.pipeline.adapters.notifications import NotificationStore
from kronii.pipeline.adapters.tables import as_datetime, as_epoch, source_controls
from sqlalchemy import delete, or_, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = [
    "DEFAULT_SNOOZE_SECS",
    "MAX_SNOOZE_SECS",
    "SourceControl",
    "SourceControls",
    "controls_router",
    "is_muted",
    "muted_reason",
]

DEFAULT_SNOOZE_SECS = 3600.0
MAX_SNOOZE_SECS = 7 * 86400.0


@dataclass(frozen=True, slots=True)
class SourceControl:
    source_key: str
    snoozed_until: float | None = None
    disabled: bool = False
    notification_id: str = ""
    updated_at: float = 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "source_key": self.source_key,
            "snoozed_until": self.snoozed_until,
            "disabled": self.disabled,
            "notification_id": self.notification_id,
            "updated_at": self.updated_at,
        }

    @classmethod
    def from_row(cls, row: Any) -> SourceControl:
        m = row._mapping
        return cls(
            source_key=m["source_key"],
            snoozed_until=as_epoch(m["snoozed_until"]),
            disabled=m["disabled"],
            notification_id=m["notification_id"],
            updated_at=as_epoch(m["updated_at"]) or 0.0,
        )


def muted_reason(control: SourceControl | None, now: float) -> str | None:
    """Why the source may not notify at `now` (epoch seconds), or None if it may."""
    if control is None:
        return None
    if control.disabled:
        return "disabled by the user"
    if control.snoozed_until is not None and now < control.snoozed_until:
        until = datetime.fromtimestamp(control.snoozed_until, UTC).isoformat(timespec="seconds")
        return f"snoozed until {until}"
    return None


def is_muted(controls: Mapping[str, SourceControl], source_key: str, now: float) -> bool:
    """The core's check against a snapshot of the controls (SourceControls.active)."""
    return muted_reason(controls.get(source_key), now) is not None


class SourceControls:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def snooze(
        self, source_key: str, *, until: float, now: float, notification_id: str = ""
    ) -> SourceControl:
        """Mute the source until `until`; a later snooze replaces an earlier one."""
        return await self._upsert(source_key, now, notification_id, snoozed_until=as_datetime(until))

    async def disable(self, source_key: str, *, now: float, notification_id: str = "") -> SourceControl:
        return await self._upsert(source_key, now, notification_id, disabled=True)

    async def clear(self, source_key: str) -> bool:
        """Undo snooze and disable; False if there was nothing to undo."""
        async with self._engine.begin() as conn:
            result = await conn.execute(
                delete(source_controls).where(source_controls.c.source_key == source_key)
            )
        return bool(result.rowcount)

    async def get(self, source_key: str) -> SourceControl | None:
        async with self._engine.connect() as conn:
            statement = select(source_controls).where(source_controls.c.source_key == source_key)
            row = (await conn.execute(statement)).one_or_none()
        return None if row is None else SourceControl.from_row(row)

    async def active(self, now: float) -> dict[str, SourceControl]:
        """Every control still in force at `now`, by source key (expired snoozes are left out)."""
        statement = select(source_controls).where(
            or_(source_controls.c.disabled, source_controls.c.snoozed_until > as_datetime(now))
        )
        async with self._engine.connect() as conn:
            rows = (await conn.execute(statement)).all()
        return {control.source_key: control for control in map(SourceControl.from_row, rows)}

    async def _upsert(
        self, source_key: str, now: float, notification_id: str, **values: Any
    ) -> SourceControl:
        if not source_key:
            raise ValueError("a source key is needed")
        changes = {"updated_at": as_datetime(now), "notification_id": notification_id, **values}
        statement = (
            insert(source_controls)
            .values(**{"source_key": source_key, "disabled": False, **changes})
            .on_conflict_do_update(index_elements=[source_controls.c.source_key], set_=changes)
            .returning(*source_controls.c)
        )
        async with self._engine.begin() as conn:
            row = (await conn.execute(statement)).one()
        return SourceControl.from_row(row)


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


def controls_router(
    notifications: NotificationStore,
    controls: SourceControls,
    *,
    clock: Callable[[], float] = time.time,
    default_snooze_secs: float = DEFAULT_SNOOZE_SECS,
    max_snooze_secs: float = MAX_SNOOZE_SECS,
) -> APIRouter:
    """POST /v1/notifications/{id}/snooze (body {"duration_secs": N}, optional) and /disable act on
    the notification's source; GET /v1/controls lists what is in force; DELETE
    /v1/controls/{source_key} undoes it."""
    router = APIRouter(prefix="/v1", tags=["controls"])

    async def source_of(notification_id: str) -> str:
        message = await notifications.get(notification_id)
        if message is None:
            raise NotFound(f"no notification {notification_id!r}")
        if not message.source_key:
            raise Conflict(f"notification {notification_id!r} has no source to snooze or disable")
        return message.source_key

    snooze_body = {
        "type": "object",
        "properties": {
            "duration_secs": {"type": "number", "exclusiveMinimum": 0, "maximum": max_snooze_secs}
        },
    }

    @router.post(
        "/notifications/{notification_id}/snooze",
        responses=errors(404, 409),
        openapi_extra=json_body(snooze_body, required=False),
    )
    async def snooze(notification_id: PathId, request: Request) -> dict[str, Any]:
        secs = await _snooze_secs(request, default_snooze_secs, max_snooze_secs)
        source_key = await source_of(notification_id)
        now = clock()
        control = await controls.snooze(
            source_key, until=now + secs, now=now, notification_id=notification_id
        )
        return control.as_json()

    @router.post("/notifications/{notification_id}/disable", responses=errors(404, 409))
    async def disable(notification_id: PathId) -> dict[str, Any]:
        source_key = await source_of(notification_id)
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
