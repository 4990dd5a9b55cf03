"""gRPC: kronii.vision.v1.Vision, the same semantics as HTTP (KroniiErrors become statuses with their
sentence through the service's interceptor). No approval here: that is a person's, on the local socket."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

from kronii.runtime.readiness import require_ready
from kronii.vision.api.convert import plan_command, plan_message
from kronii.vision.core.commands import PlanDecision
from kronii.vision.usecases.operations import VisionOperations
from kronii.vision.v1 import vision_pb2 as pb
from kronii.vision.v1 import vision_pb2_grpc as pb_grpc

__all__ = ["VisionServicer"]

Context: TypeAlias = Any  # grpc ships no stubs for the servicer context


class VisionServicer(pb_grpc.VisionServicer):
    def __init__(self, operations: Callable[[], VisionOperations]) -> None:
        self._operations = operations

    async def MakePlan(self, request: pb.PlanRequest, context: Context) -> pb.Plan:
        peer = str(context.peer()) if context is not None else ""
        command = plan_command(request.intent, f"grpc:{peer}", request.execute)
        await require_ready()
        return plan_message(await self._operations().plan(command))

    async def GetPlan(self, request: pb.PlanId, context: Context) -> pb.Plan:
        return plan_message(self._operations().show(request.plan_id))

    async def ListPlans(self, request: pb.ListPlansRequest, context: Context) -> pb.ListPlansResponse:
        return pb.ListPlansResponse(plans=[plan_message(plan) for plan in self._operations().plans()])

    async def RunPlan(self, request: pb.PlanId, context: Context) -> pb.Plan:
        await require_ready()
        return plan_message(self._operations().run(request.plan_id))

    async def DenyPlan(self, request: pb.PlanId, context: Context) -> pb.Plan:
        peer = str(context.peer()) if context is not None else ""
        decision = PlanDecision(request.plan_id, f"grpc:{peer}")
        return plan_message(await self._operations().deny(decision))
