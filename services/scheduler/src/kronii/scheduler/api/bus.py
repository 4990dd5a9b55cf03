"""The scheduler's NATS handlers: plans on `kronii.scheduler.plan`, admissions by request/reply on
`kronii.scheduler.admit`. Each decodes, builds the command, calls the front and answers."""

from __future__ import annotations

import logging

from kronii.scheduler.api.convert import admission_message, admit_input, invalid_admission, plan_command
from kronii.scheduler.core.model import InvalidRequest
from kronii.scheduler.usecases.operations import SchedulerOperations
from kronii.scheduler.v1 import scheduler_pb2 as pb
from kronii.stores.durable import StoreUnavailable

__all__ = ["SchedulerBus", "invalid_admission"]

log = logging.getLogger(__name__)


class SchedulerBus:
    def __init__(self, operations: SchedulerOperations) -> None:
        self._operations = operations

    async def on_plan(self, subject: str, plan: pb.Plan) -> None:
        try:
            await self._operations.submit_plan(plan_command(plan))
        except InvalidRequest as error:
            log.warning("refused a plan from run %s: %s", plan.run_id or "?", error)
        except StoreUnavailable as error:
            log.warning("could not apply a plan from run %s: %s", plan.run_id or "?", error.message)

    async def on_admit(self, message: pb.AdmitRequest) -> pb.AdmitResponse:
        try:
            return admission_message(await self._operations.admit(admit_input(message)))
        except InvalidRequest as error:
            return invalid_admission(str(error))
