"""gRPC: SchedulerService, the same semantics as HTTP; a bad request is INVALID_ARGUMENT naming
the field."""

from __future__ import annotations

from typing import Protocol

import grpc
from kronii.scheduler.v1 import scheduler_pb2 as pb
from kronii.scheduler.v1 import scheduler_pb2_grpc as pb_grpc

__all__ = ["SchedulerServicer"]


class _Scheduler(Protocol):
    async def submit_plan(self, plan: pb.Plan) -> pb.PlanResponse: ...
    async def admit(self, request: pb.AdmitRequest) -> pb.AdmitResponse: ...
    async def schedule(self) -> pb.ScheduleView: ...


class SchedulerServicer(pb_grpc.SchedulerServiceServicer):
    def __init__(self, scheduler: _Scheduler) -> None:
        self._scheduler = scheduler

    async def SubmitPlan(
        self, request: pb.Plan, context: grpc.aio.ServicerContext[object, object]
    ) -> pb.PlanResponse:
        return await self._scheduler.submit_plan(request)

    async def Admit(
        self, request: pb.AdmitRequest, context: grpc.aio.ServicerContext[object, object]
    ) -> pb.AdmitResponse:
        return await self._scheduler.admit(request)

    async def GetSchedule(
        self, request: pb.GetScheduleRequest, context: grpc.aio.ServicerContext[object, object]
    ) -> pb.ScheduleView:
        return await self._scheduler.schedule()
