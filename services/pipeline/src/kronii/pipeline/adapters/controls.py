"""Snooze and disable, per source (an app, a plugin, a rule: whatever a notification's source_key
names), in PostgreSQL (api/controls.py sets and clears them over HTTP, through PipelineOperations); the
values and the "is this source muted now?" check are core/controls.py's."""

from __future__ import annotations

from typing import Any

from kronii.pipeline.adapters.tables import as_datetime, as_epoch, source_controls
from kronii.pipeline.core.controls import SourceControl, is_muted, muted_reason
from sqlalchemy import delete, or_, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = ["SourceControl", "SourceControls", "control_from_row", "is_muted", "muted_reason"]


def control_from_row(row: Any) -> SourceControl:
    m = row._mapping
    return SourceControl(
        source_key=m["source_key"],
        snoozed_until=as_epoch(m["snoozed_until"]),
        disabled=m["disabled"],
        notification_id=m["notification_id"],
        updated_at=as_epoch(m["updated_at"]) or 0.0,
    )


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
        return None if row is None else control_from_row(row)

    async def active(self, now: float) -> dict[str, SourceControl]:
        """Every control still in force at `now`, by source key (expired snoozes are left out)."""
        statement = select(source_controls).where(
            or_(source_controls.c.disabled, source_controls.c.snoozed_until > as_datetime(now))
        )
        async with self._engine.connect() as conn:
            rows = (await conn.execute(statement)).all()
        return {control.source_key: control for control in map(control_from_row, rows)}

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
        return control_from_row(row)
