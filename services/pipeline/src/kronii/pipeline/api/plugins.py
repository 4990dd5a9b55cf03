"""The plugin registry over HTTP: list the plugins, show one, enable or disable it."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from kronii.edge.limits import PathId
from kronii.edge.openapi import errors
from kronii.pipeline.api.convert import plugin_json
from kronii.pipeline.api.source import OperationsSource

__all__ = ["plugins_router"]


def plugins_router(operations: OperationsSource) -> APIRouter:
    """GET /v1/plugins, GET /v1/plugins/{app_id}, POST /v1/plugins/{app_id}/enable and /disable."""
    router = APIRouter(prefix="/v1/plugins", tags=["plugins"])

    @router.get("")
    async def list_plugins() -> dict[str, Any]:
        return {"plugins": [plugin_json(record) for record in await operations().plugins()]}

    @router.get("/{app_id}", responses=errors(404))
    async def get_plugin(app_id: PathId) -> dict[str, Any]:
        return plugin_json(await operations().plugin(app_id))

    @router.post("/{app_id}/enable", responses=errors(404))
    async def enable_plugin(app_id: PathId) -> dict[str, Any]:
        return plugin_json(await operations().set_plugin_enabled(app_id, True))

    @router.post("/{app_id}/disable", responses=errors(404))
    async def disable_plugin(app_id: PathId) -> dict[str, Any]:
        return plugin_json(await operations().set_plugin_enabled(app_id, False))

    return router
