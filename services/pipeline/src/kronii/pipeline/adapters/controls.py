"""Snooze and disable, per source (an app, a plugin, a rule: whatever a notification's source_key
names), in PostgreSQL (api/controls.py sets and clears them over HTTP), and the pure check the
core calls before it notifies: "is this source muted now?"."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kronii.pipeline.adapters.tables import as_datetime, as_epoch, source_controls
from sqlalchemy import delete, or_, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = ["SourceControl", "SourceControls", "is_muted", "muted_reason"]


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
