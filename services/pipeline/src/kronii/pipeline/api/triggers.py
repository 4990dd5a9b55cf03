"""POST /v1/triggers (agents and scripts ask for a round) and GET /v1/state (where the machine is).

A trigger is kept in memory until its round: it is acknowledged (202) only while the pipeline says it
is ready; otherwise the answer is 503 with Retry-After and nothing is taken."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Request
from kronii.common.api_edge import read_body
from kronii.common.errors import Unprocessable
from kronii.common.openapi import errors, json_body
from kronii.common.readiness import require_ready
from kronii.pipeline.api.convert import REQUEST_SCHEMA, TriggerRequestError, trigger_from_request
from kronii.pipeline.core.states import Trigger
from kronii.pipeline.v1 import pipeline_pb2 as pb

__all__ = ["pipeline_router"]


def pipeline_router(
    submit: Callable[[Trigger], Awaitable[str]],
    status: Callable[[], dict[str, Any]],
    clock: Callable[[], int],
) -> APIRouter:
    router = APIRouter(prefix="/v1", tags=["pipeline"])

    @router.post(
        "/triggers", status_code=202, responses=errors(422, 503), openapi_extra=json_body(REQUEST_SCHEMA)
    )
    async def post_trigger(request: Request) -> dict[str, Any]:
        message = await read_body(request, pb.TriggerRequest(), empty_ok=False)
        try:
            trigger = trigger_from_request(message, clock())
        except TriggerRequestError as error:
            raise Unprocessable(str(error)) from None
        await require_ready()
        outcome = await submit(trigger)
        return {"accepted": True, "kind": trigger.kind.value, "intake": outcome}

    @router.get("/state")
    async def get_state() -> dict[str, Any]:
        return status()

    return router
