"""POST /v1/triggers (agents and scripts ask for a round) and GET /v1/state (where the machine is).

A trigger is kept in memory until its round: it is acknowledged (202) only while the pipeline says it
is ready; otherwise the answer is 503 with Retry-After and nothing is taken."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from kronii.edge.api_edge import read_body
from kronii.edge.openapi import errors, json_body
from kronii.foundation.errors import Unprocessable
from kronii.pipeline.api.convert import REQUEST_SCHEMA, TriggerRequestError, trigger_from_request
from kronii.pipeline.api.source import OperationsSource
from kronii.pipeline.v1 import pipeline_pb2 as pb
from kronii.runtime.readiness import require_ready

__all__ = ["pipeline_router"]


def pipeline_router(operations: OperationsSource) -> APIRouter:
    router = APIRouter(prefix="/v1", tags=["pipeline"])

    @router.post(
        "/triggers", status_code=202, responses=errors(422, 503), openapi_extra=json_body(REQUEST_SCHEMA)
    )
    async def post_trigger(request: Request) -> dict[str, Any]:
        message = await read_body(request, pb.TriggerRequest(), empty_ok=False)
        try:
            command = trigger_from_request(message)
        except TriggerRequestError as error:
            raise Unprocessable(str(error)) from None
        await require_ready()
        outcome = await operations().submit(command)
        return {"accepted": True, "kind": outcome.kind.value, "intake": outcome.intake}

    @router.get("/state")
    async def get_state() -> dict[str, Any]:
        return operations().status()

    return router
