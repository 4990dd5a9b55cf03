"""HTTP: GET /v1/schedule, POST /v1/plans, POST /v1/admit. JSON bodies use the proto field names
(`next_wakeup` as RFC 3339, `priority` as "normal" or "high"); a bad body is a 400 whose `detail`
names the field."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import APIRouter, Request
from google.protobuf.message import Message
from kronii.edge.api_edge import as_json, parse_message, read_json_object
from kronii.edge.openapi import json_body, message_schema
from kronii.scheduler.api.convert import (
    admission_message,
    admit_input,
    plan_command,
    plan_response,
    schedule_message,
)
from kronii.scheduler.usecases.operations import SchedulerOperations
from kronii.scheduler.v1 import scheduler_pb2 as pb

__all__ = ["scheduler_router"]

M = TypeVar("M", bound=Message)


async def _body(request: Request, message: M) -> M:
    data = await read_json_object(request, what=message.DESCRIPTOR.name)
    # The API takes the priority in lower case; the proto's enum names are upper case.
    if isinstance(data.get("priority"), str):
        data["priority"] = data["priority"].upper()
    return parse_message(data, message)


def _schema(message: type[Message]) -> dict[str, Any]:
    """The proto's JSON form as this API takes it: `priority` in lower case."""
    schema = message_schema(message.DESCRIPTOR)
    if "priority" in schema["properties"]:
        schema["properties"]["priority"] = {"type": "string", "enum": ["normal", "high"]}
    return json_body(schema, required=False)


def scheduler_router(operations: Callable[[], SchedulerOperations]) -> APIRouter:
    router = APIRouter(prefix="/v1", tags=["scheduler"])

    @router.get("/schedule")
    async def get_schedule() -> dict[str, Any]:
        """Pending wake-ups, the cooldown, live trigger filters, run counters and ceilings."""
        return as_json(schedule_message(await operations().schedule()))

    @router.post("/plans", openapi_extra=_schema(pb.Plan))
    async def post_plan(request: Request) -> dict[str, Any]:
        """Apply a Planner's plan (the same as a Plan on kronii.scheduler.plan)."""
        plan = await _body(request, pb.Plan())
        return as_json(plan_response(await operations().submit_plan(plan_command(plan))))

    @router.post("/admit", openapi_extra=_schema(pb.AdmitRequest))
    async def post_admit(request: Request) -> dict[str, Any]:
        """May a run start now? 200 with the decision, refused or not; 400 for a bad request."""
        admit = await _body(request, pb.AdmitRequest())
        return as_json(admission_message(await operations().admit(admit_input(admit))))

    return router
