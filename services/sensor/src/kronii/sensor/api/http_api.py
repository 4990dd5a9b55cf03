"""HTTP: GET /v1/snapshot."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter
from kronii.activity.v1 import activity_pb2 as pb
from kronii.common.api_edge import as_json
from kronii.common.errors import Unavailable

__all__ = ["snapshot_router"]


def snapshot_router(snapshot: Callable[[], Awaitable[pb.Snapshot]]) -> APIRouter:
    router = APIRouter(prefix="/v1", tags=["sensor"])

    @router.get("/snapshot")
    async def get_snapshot() -> dict[str, Any]:
        """The latest activity snapshot (the same one gRPC GetSnapshot returns)."""
        try:
            message = await snapshot()
        except LookupError as error:
            raise Unavailable(f"no snapshot yet: {error}") from None
        return as_json(message)

    return router
