"""POST /v1/triggers (agents and scripts ask for a round) and GET /v1/state (where the machine is)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from google.protobuf.json_format import ParseDict, ParseError
from kronii.common.openapi import errors, json_body
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

    @router.post("/triggers", status_code=202, responses=errors(422), openapi_extra=json_body(REQUEST_SCHEMA))
    async def post_trigger(request: Request) -> dict[str, Any]:
        try:
            body = json.loads(await request.body() or b"null")
        except ValueError:
            raise HTTPException(400, "the body is not valid JSON") from None
        if not isinstance(body, dict):
            raise HTTPException(400, "the body must be a JSON object (a TriggerRequest)")
        message = pb.TriggerRequest()
        try:
            ParseDict(body, message)
        except ParseError as error:
            raise HTTPException(400, f"not a TriggerRequest: {error}") from None
        try:
            trigger = trigger_from_request(message, clock())
        except TriggerRequestError as error:
            raise HTTPException(422, str(error)) from None
        outcome = await submit(trigger)
        return {"accepted": True, "kind": trigger.kind.value, "intake": outcome}

    @router.get("/state")
    async def get_state() -> dict[str, Any]:
        return status()

    return router
