"""gRPC: SchedulerService, the same semantics as HTTP; a bad request is INVALID_ARGUMENT naming
the field."""

from __future__ import annotations

from collections.abc import Callable

import grpc
from kronii.scheduler.api.convert import (
    admission_message,
    admit_input,
    plan_command,
    plan_response,
    schedule_message,
)
from kronii.scheduler.usecases.operations import SchedulerOperations
from kronii.scheduler.v1 import scheduler_pb2 as pb
from kronii.scheduler.v1 import scheduler_pb2_grpc as pb_grpc

__all__ = ["SchedulerServicer"]


class SchedulerServicer(pb_grpc.SchedulerServiceServicer):
    def __init__(self, operations: Callable[[], SchedulerOperations]) -> None:
        self._operations = operations

    async def SubmitPlan(
        self, request: pb.Plan, context: grpc.aio.ServicerContext[object, object]
    ) -> pb.PlanResponse:
        return plan_response(await self._operations().submit_plan(plan_command(request)))

    async def Admit(
        self, request: pb.AdmitRequest, context: grpc.aio.ServicerContext[object, object]
    ) -> pb.AdmitResponse:
        return admission_message(await self._operations().admit(admit_input(request)))

    async def GetSchedule(
        self, request: pb.GetScheduleRequest, context: grpc.aio.ServicerContext[object, object]
    ) -> pb.ScheduleView:
        return schedule_message(await self._operations().schedule())
