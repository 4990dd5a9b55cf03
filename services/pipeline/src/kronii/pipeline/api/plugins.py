"""The plugin registry over HTTP: list the plugins, show one, enable or disable it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter
from kronii.common.errors import NotFound
from kronii.common.limits import PathId
from kronii.common.openapi import errors
from kronii.pipeline.ports import PluginRegistryStore, UnknownPlugin

__all__ = ["plugins_router"]


def plugins_router(store: PluginRegistryStore, clock: Callable[[], float] = time.time) -> APIRouter:
    """GET /v1/plugins, GET /v1/plugins/{app_id}, POST /v1/plugins/{app_id}/enable and /disable."""
    router = APIRouter(prefix="/v1/plugins", tags=["plugins"])

    @router.get("")
    async def list_plugins() -> dict[str, Any]:
        return {"plugins": [record.as_json() for record in await store.list()]}

    @router.get("/{app_id}", responses=errors(404))
    async def get_plugin(app_id: PathId) -> dict[str, Any]:
        record = await store.get(app_id)
        if record is None:
            raise NotFound(str(UnknownPlugin(app_id)))
        return record.as_json()

    async def set_enabled(app_id: str, enabled: bool) -> dict[str, Any]:
        try:
            record = await store.set_enabled(app_id, enabled, now=clock())
        except UnknownPlugin as error:
            raise NotFound(str(error)) from None
        return record.as_json()

    @router.post("/{app_id}/enable", responses=errors(404))
    async def enable_plugin(app_id: PathId) -> dict[str, Any]:
        return await set_enabled(app_id, True)

    @router.post("/{app_id}/disable", responses=errors(404))
    async def disable_plugin(app_id: PathId) -> dict[str, Any]:
        return await set_enabled(app_id, False)

    return router
