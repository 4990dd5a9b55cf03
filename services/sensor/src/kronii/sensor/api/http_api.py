"""HTTP: GET /v1/snapshot."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, HTTPException
from google.protobuf.json_format import MessageToDict
from kronii.activity.v1 import activity_pb2 as pb

__all__ = ["snapshot_router"]


def snapshot_router(snapshot: Callable[[], Awaitable[pb.Snapshot]]) -> APIRouter:
    router = APIRouter(prefix="/v1", tags=["sensor"])

    @router.get("/snapshot")
    async def get_snapshot() -> dict[str, Any]:
        """The latest activity snapshot (the same one gRPC GetSnapshot returns)."""
        try:
            message = await snapshot()
        except LookupError as error:
            raise HTTPException(status_code=503, detail=f"no snapshot yet: {error}") from None
        return MessageToDict(
            message,
            preserving_proto_field_name=True,
            always_print_fields_with_no_presence=True,
            use_integers_for_enums=False,
        )

    return router
