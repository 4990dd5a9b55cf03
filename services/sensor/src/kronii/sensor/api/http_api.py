"""HTTP: GET /v1/snapshot, over SensorOperations."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter
from kronii.edge.api_edge import as_json
from kronii.foundation.errors import Unavailable
from kronii.sensor.api.convert import snapshot_message
from kronii.sensor.usecases.operations import SensorOperations

__all__ = ["snapshot_router"]


def snapshot_router(operations: Callable[[], SensorOperations]) -> APIRouter:
    router = APIRouter(prefix="/v1", tags=["sensor"])

    @router.get("/snapshot")
    async def get_snapshot() -> dict[str, Any]:
        """The latest activity snapshot (the same one gRPC GetSnapshot returns)."""
        try:
            snapshot = await operations().snapshot()
        except LookupError as error:
            raise Unavailable(f"no snapshot yet: {error}") from None
        return as_json(snapshot_message(snapshot))

    return router
