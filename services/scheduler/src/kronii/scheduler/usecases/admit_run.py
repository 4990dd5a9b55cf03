"""May a run start now? Read, decide and record under one lock shared by every replica; a justified
high-priority trigger that ends the cooldown leaves an audit row."""

from __future__ import annotations

import logging

from kronii.foundation.clock import Clock
from kronii.scheduler.core.model import Admission, AdmitInput, Limits
from kronii.scheduler.core.rules import check_admit_input, decide_admission
from kronii.scheduler.metrics import SchedulerMetrics
from kronii.scheduler.ports import TimerStore
from kronii.scheduler.usecases.audit_later import AuditLater

__all__ = ["AdmitRun"]

log = logging.getLogger(__name__)


class AdmitRun:
    def __init__(
        self, timers: TimerStore, clock: Clock, limits: Limits, metrics: SchedulerMetrics, audit: AuditLater
    ) -> None:
        self._timers = timers
        self._clock = clock
        self._limits = limits
        self._metrics = metrics
        self._audit = audit

    async def __call__(self, command: AdmitInput) -> Admission:
        """Raises InvalidRequest naming the field."""
        timers = self._timers
        request = check_admit_input(command)
        async with timers.admission_lock():
            now = self._clock.monotonic()
            view = await timers.admission_view(request.app, now)
            admission = decide_admission(request, view, now, self._limits)
            if admission.counts_run:
                await timers.record_run(request.app, now)
            if admission.ends_cooldown:
                await timers.set_cooldown(None)
        self._metrics.admits.labels("allowed" if admission.allowed else "refused", admission.reason).inc()
        if admission.preempted_cooldown and not request.dry_run:
            self._metrics.preemptions.labels(request.trigger_kind).inc()
            log.info("a high-priority %s for %s preempted the cooldown", request.trigger_kind, request.app)
            self._audit(
                actor=request.app or "pipeline",
                action="schedule.preempt",
                subject=request.trigger_kind,
                outcome="cooldown_ended",
                justification=request.justification,
            )
        return admission
