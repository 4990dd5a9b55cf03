"""The scheduler as the runner sees it: admission requests and plans on the scheduler's NATS subjects."""

from __future__ import annotations

import logging

from kronii.pipeline.core.answers import Admit
from kronii.pipeline.core.roles.values import Plan
from kronii.pipeline.core.states import Trigger
from kronii.scheduler.v1 import scheduler_pb2 as spb
from kronii.stores import subjects
from kronii.stores.bus import Bus
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeoutError

__all__ = ["NatsScheduler"]

log = logging.getLogger(__name__)


class NatsScheduler:
    """Admission and plans on the scheduler's subjects; `available` says whether it answered last."""

    def __init__(self, bus: Bus, *, timeout_secs: float = 0.5) -> None:
        self._bus = bus
        self._timeout = timeout_secs
        self.available: bool | None = None
        self.detail = "no admission asked yet"

    async def admit(self, app: str, trigger: Trigger) -> Admit | None:
        request = spb.AdmitRequest(
            app=app,
            trigger_kind=trigger.kind.value,
            priority=spb.HIGH if trigger.high_priority else spb.NORMAL,
            justification=f"high-priority {trigger.kind.value}" if trigger.high_priority else "",
        )
        try:
            response = await self._bus.request(subjects.SCHEDULER_ADMIT, request, wait_secs=self._timeout)
        except (NoRespondersError, NatsTimeoutError, TimeoutError):
            self.available = False
            self.detail = "the scheduler does not answer admissions: the pipeline's own rate limits apply"
            return None
        self.available = True
        self.detail = "the scheduler admits runs"
        return Admit(response.allowed, response.reason, int(response.retry_after_ms))

    async def plan(self, run_id: str, app: str, plan: Plan, now_ms: int) -> None:
        message = spb.Plan(
            run_id=run_id,
            app=app,
            min_cooldown_ms=max(0, min(plan.min_cooldown_ms, 86_400_000)),
            trigger_filters=list(plan.trigger_filters),
            reason=plan.reason[:500],
            wakeup_in_ms=max(0, plan.next_wakeup_ms - now_ms),
        )
        try:
            await self._bus.publish(subjects.SCHEDULER_PLAN, message)
        except Exception as error:
            log.warning(
                "the plan of run %s was not handed to the scheduler: %s", run_id, type(error).__name__
            )
