"""A round's screenshot: asking the capture service for one, then waiting in AwaitingCapture for its
outcome, the capture's TTL or a high-priority trigger that preempts it (additional guard 1)."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace
from typing import Any

from kronii.foundation.clock import Clock
from kronii.pipeline.core.answers import CaptureOutcome
from kronii.pipeline.core.intake import Batch
from kronii.pipeline.core.machine import Facts, NoTransition, Step, step
from kronii.pipeline.core.round import Round, RunnerConfig
from kronii.pipeline.core.states import CaptureStatus, Priority, RunState, Trigger, TriggerKind
from kronii.pipeline.core.table import Action
from kronii.pipeline.ports import CapturePort
from kronii.pipeline.usecases.round_state import Standing, Stepper

__all__ = ["CaptureWait"]


def _state(current: Round) -> RunState:
    # Read through a call: the state changes under awaits, which type narrowing does not see.
    return current.state


class CaptureWait:
    def __init__(
        self, standing: Standing, stepper: Stepper, capture: CapturePort, config: RunnerConfig, clock: Clock
    ) -> None:
        self._standing = standing
        self._stepper = stepper
        self._capture = capture
        self._config = config
        self._clock = clock

    async def request(self, current: Round) -> None:
        assert current.base is not None
        priority = Priority.HIGH if current.batch.high_priority else Priority.NORMAL
        try:
            current.capture_job = await self._capture.request(
                current.base, priority, self._config.capture_ttl_ms
            )
        except Exception as error:
            current.notes.append(f"capture request failed: {type(error).__name__}")
            current.capture_job = ""
        current.capture_deadline_ms = self._clock.monotonic_ms() + self._config.capture_ttl_ms
        current.record = replace(current.record, plugins_used=(*current.record.plugins_used, "screencapture"))

    async def await_outcome(self, current: Round) -> None:
        job = current.capture_job
        outcome_task: asyncio.Task[CaptureOutcome] | None = None
        if job:
            outcome_task = asyncio.ensure_future(self._capture.outcome(job))
        try:
            while current.state is RunState.AWAITING_CAPTURE:
                remaining = max(0.0, (current.capture_deadline_ms - self._clock.monotonic_ms()) / 1000)
                preempt_task = asyncio.ensure_future(self._standing.preempt.get())
                waiting: set[asyncio.Future[Any]] = {preempt_task}
                if outcome_task is not None:
                    waiting.add(outcome_task)
                done, _ = await asyncio.wait(waiting, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
                if preempt_task not in done:
                    preempt_task.cancel()
                if outcome_task is not None and outcome_task in done:
                    await self._done(current, outcome_task)
                elif preempt_task in done:
                    await self._preempted(current, preempt_task.result())
                    if _state(current) is not RunState.AWAITING_CAPTURE:
                        return
                elif not done:
                    current.notes.append("capture timed out")
                    await self._stepper.internal(current, Facts(), TriggerKind.TIMEOUT)
                else:  # no job at all: the request itself failed
                    await self._failed(current, "capture request failed")
        finally:
            if outcome_task is not None and not outcome_task.done():
                outcome_task.cancel()

    async def _failed(self, current: Round, reason: str) -> None:
        trigger = Trigger(
            TriggerKind.CAPTURE_STATUS, self._clock.monotonic_ms(), capture_status=CaptureStatus.FAILED
        )
        current.notes.append(f"capture failed: {reason}")
        await self._stepper.move(current, step(current.state, trigger, Facts()))

    async def _done(self, current: Round, task: asyncio.Task[CaptureOutcome]) -> None:
        try:
            outcome = task.result()
        except Exception as error:
            await self._failed(current, type(error).__name__)
            return
        now = self._clock.monotonic_ms()
        trigger = Trigger(
            TriggerKind.CAPTURE_STATUS, now, capture_status=outcome.status, capture_job_id=current.capture_job
        )
        within = now <= current.capture_deadline_ms
        moved = step(current.state, trigger, Facts(capture_within_ttl=within))
        if isinstance(moved, Step) and Action.ATTACH_SCREENSHOT_ID in moved.actions:
            current.screenshot_id = outcome.screenshot_id or None
            current.notes.append("capture persisted")
        elif isinstance(moved, Step):
            current.notes.append(f"capture {outcome.status.value}: degraded to the other context")
        await self._stepper.move(current, moved)

    async def _preempted(self, current: Round, trigger: Trigger) -> None:
        policy = self._standing.last_preemption
        moved = step(current.state, trigger, Facts(capture_preemption=policy))
        if isinstance(moved, NoTransition):
            return
        if Action.CANCEL_CAPTURE in moved.actions and current.capture_job:
            with contextlib.suppress(Exception):
                await self._capture.cancel(current.capture_job)
            current.notes.append("capture cancelled by a high-priority trigger")
            # Start over from the new focus: a fresh batch, snapshot and route.
            current.batch = Batch(trigger, trigger, 1, trigger.at_ms, high_priority=True)
            current.base = None
            current.decision = None
            current.plugin_gathered = False
            current.plugin_contents.clear()
        elif Action.DOWNGRADE_CAPTURE in moved.actions:
            current.notes.append("capture downgraded by a high-priority trigger")
        await self._stepper.move(current, moved)
