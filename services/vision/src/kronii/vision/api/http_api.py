"""HTTP: the vision engine's routes under /v1/vision. Bodies and answers are vision.proto's messages
in JSON (proto field names). Approving is a person's act: only through the local socket with a proof
of presence (see adapters/person_gate.py), never over TCP or with a token. A plan is made, approved
or run only while the engine says it is ready (503 with Retry-After otherwise)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from kronii.edge.api_edge import as_json, read_body
from kronii.edge.openapi import errors, proto_body
from kronii.edge.presence_rules import SESSION_HEADER, TTY_HEADER
from kronii.runtime.readiness import require_ready
from kronii.vision.api.convert import context_json, plan_command, plan_message
from kronii.vision.core.commands import CallFacts, PlanDecision
from kronii.vision.usecases.operations import VisionOperations
from kronii.vision.v1 import vision_pb2 as pb

__all__ = ["vision_router"]

Operations = Callable[[], VisionOperations]


def _facts(request: Request) -> CallFacts:
    client = request.client
    return CallFacts(
        peer_host=client.host if client else "",
        peer_port=client.port if client else 0,
        tty=request.headers.get(TTY_HEADER, ""),
        session=request.headers.get(SESSION_HEADER, ""),
    )


def _requester(request: Request) -> str:
    client = request.client
    return f"http:{client.host}" if client else "http"


def vision_router(operations: Operations) -> APIRouter:
    router = APIRouter(prefix="/v1/vision", tags=["vision"])

    @router.post(
        "/plans", responses=errors(400, 409, 503), openapi_extra=proto_body(pb.PlanRequest, required=True)
    )
    async def make_plan(request: Request) -> dict[str, Any]:
        """Plan an intent on the screen as it is now; with `execute`, run it when nothing is flagged."""
        body = await read_body(request, pb.PlanRequest(), empty_ok=False)
        await require_ready()
        door = operations()
        command = plan_command(body.intent, _requester(request), body.execute)
        return as_json(plan_message(await door.plan(command)))

    @router.get("/plans", responses=errors(503))
    async def list_plans() -> dict[str, Any]:
        """The plans held, newest first."""
        plans = [plan_message(plan) for plan in operations().plans()]
        return as_json(pb.ListPlansResponse(plans=plans))

    @router.get("/plans/{plan_id}", responses=errors(404, 503))
    async def get_plan(plan_id: str) -> dict[str, Any]:
        return as_json(plan_message(operations().show(plan_id)))

    @router.post("/plans/{plan_id}/approve", responses=errors(403, 404, 409, 503))
    async def approve_plan(plan_id: str, request: Request) -> dict[str, Any]:
        """A person's yes, bound to the screen the plan was made on (409 and a new plan if it changed)."""
        door = operations()
        await require_ready()
        actor = await door.person(_facts(request))
        return as_json(plan_message(await door.approve(PlanDecision(plan_id, actor))))

    @router.post("/plans/{plan_id}/deny", responses=errors(404, 409, 503))
    async def deny_plan(plan_id: str, request: Request) -> dict[str, Any]:
        decision = PlanDecision(plan_id, _requester(request))
        return as_json(plan_message(await operations().deny(decision)))

    @router.post("/plans/{plan_id}/run", responses=errors(404, 409, 503))
    async def run_plan(plan_id: str) -> dict[str, Any]:
        """Run a plan nothing flagged; a flagged one waits for a person (409)."""
        await require_ready()
        return as_json(plan_message(operations().run(plan_id)))

    @router.get("/context", responses=errors(503))
    async def screen_context() -> dict[str, Any]:
        """What a plan would see now: the pruned tree, OCR zones (redacted), timings."""
        return context_json(await operations().context())

    return router
