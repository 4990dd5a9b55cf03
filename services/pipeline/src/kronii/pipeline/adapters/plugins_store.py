"""The plugin registry (seed 000, PluginRegistry: app_id, installed, enabled, capabilities{snapshot,
events, summarize, redact_hint}, risk_score) in PostgreSQL; api/plugins.py lists, enables and
disables them over HTTP
(through the PipelineOperations facade).

A plugin that registers for the first time starts enabled only if its risk score is below the
store's threshold; after that, enabled is the user's choice and re-registering never changes it."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from kronii.pipeline.adapters.tables import as_datetime, as_epoch, plugins
from kronii.pipeline.core.plugins import Capabilities, PluginRecord, PluginRegistration
from kronii.pipeline.ports import UnknownPlugin
from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = ["PluginStore", "record_from_row"]

DEFAULT_AUTO_ENABLE_BELOW = 0.5


def _capabilities(data: dict[str, Any]) -> Capabilities:
    return Capabilities(
        **{key: bool(data.get(key, False)) for key in ("snapshot", "events", "summarize", "redact_hint")}
    )


def record_from_row(row: Any) -> PluginRecord:
    m = row._mapping
    return PluginRecord(
        app_id=m["app_id"],
        display_name=m["display_name"],
        version=m["version"],
        installed=m["installed"],
        enabled=m["enabled"],
        capabilities=_capabilities(m["capabilities"] or {}),
        risk_score=m["risk_score"],
        registered_at=as_epoch(m["registered_at"]) or 0.0,
        updated_at=as_epoch(m["updated_at"]) or 0.0,
        last_seen_at=as_epoch(m["last_seen_at"]),
    )


class PluginStore:
    def __init__(self, engine: AsyncEngine, *, auto_enable_below: float = DEFAULT_AUTO_ENABLE_BELOW) -> None:
        self._engine = engine
        self._auto_enable_below = auto_enable_below

    async def register(self, registration: PluginRegistration, *, now: float) -> PluginRecord:
        """Insert or refresh a plugin from its registration; returns the stored record."""
        app_id = registration.app_id
        if not app_id:
            raise ValueError("a plugin registration needs an app_id")
        if not 0.0 <= registration.risk_score <= 1.0:
            raise ValueError(f"risk_score of {app_id!r} must be between 0 and 1")
        at = as_datetime(now)
        values = {
            "display_name": registration.display_name or app_id,
            "version": registration.version,
            "installed": True,
            "capabilities": asdict(registration.capabilities),
            "risk_score": registration.risk_score,
            "updated_at": at,
            "last_seen_at": at,
        }
        statement = (
            insert(plugins)
            .values(
                app_id=app_id,
                enabled=registration.risk_score < self._auto_enable_below,
                registered_at=at,
                **values,
            )
            .on_conflict_do_update(index_elements=[plugins.c.app_id], set_=values)
            .returning(*plugins.c)
        )
        async with self._engine.begin() as conn:
            row = (await conn.execute(statement)).one()
        return record_from_row(row)

    async def set_enabled(self, app_id: str, enabled: bool, *, now: float) -> PluginRecord:
        return await self._change(app_id, now, enabled=enabled)

    async def set_installed(self, app_id: str, installed: bool, *, now: float) -> PluginRecord:
        return await self._change(app_id, now, installed=installed)

    async def _change(self, app_id: str, now: float, **values: Any) -> PluginRecord:
        statement = (
            update(plugins)
            .where(plugins.c.app_id == app_id)
            .values(updated_at=as_datetime(now), **values)
            .returning(*plugins.c)
        )
        async with self._engine.begin() as conn:
            row = (await conn.execute(statement)).one_or_none()
        if row is None:
            raise UnknownPlugin(app_id)
        return record_from_row(row)

    async def get(self, app_id: str) -> PluginRecord | None:
        async with self._engine.connect() as conn:
            row = (await conn.execute(select(plugins).where(plugins.c.app_id == app_id))).one_or_none()
        return None if row is None else record_from_row(row)

    async def list(self) -> list[PluginRecord]:
        async with self._engine.connect() as conn:
            rows = (await conn.execute(select(plugins).order_by(plugins.c.app_id))).all()
        return [record_from_row(row) for row in rows]
