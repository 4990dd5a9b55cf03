"""The run loop: wakes when a trigger was taken (or every interval), lets the runner release due
batches and run their rounds, and counts each finished run in the pipeline's metrics."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from kronii.pipeline.core.runs import RunRecord
from kronii.pipeline.metrics import PipelineMetrics
from kronii.pipeline.usecases.runner import Runner

__all__ = ["RunLoop"]

log = logging.getLogger(__name__)


class RunLoop:
    def __init__(self, runner: Runner, metrics: PipelineMetrics) -> None:
        self._runner = runner
        self._metrics = metrics
        self._wake = asyncio.Event()

    def wake(self) -> None:
        """A trigger was taken: advance now rather than at the next interval."""
        self._wake.set()

    async def run(self, interval: float) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), interval)
            self._wake.clear()
            try:
                for record in await self._runner.advance():
                    self._count(record)
            except Exception:
                log.exception("the run loop failed; going on")

    def _count(self, record: RunRecord) -> None:
        metrics = self._metrics
        kind, _, detail = record.decision.partition(":")
        metrics.runs.labels(kind or "none").inc()
        if kind == "deferred":
            metrics.deferrals.labels(detail or "unknown").inc()
        if record.finished_at is not None:
            metrics.run_seconds.observe(max(0.0, record.finished_at - record.created_at))
        for call in record.model_calls:
            metrics.model_calls.labels(call.role, call.outcome).inc()
            if call.fallback:
                metrics.model_fallbacks.labels(call.role, call.fallback.split(":", 1)[0]).inc()
            metrics.tokens.labels("in").inc(call.input_tokens)
            metrics.tokens.labels("out").inc(call.output_tokens)
