"""Making a plan (seed 001, steps 1-8): the screen's context, the planner's actions, the safety
layer's verdict, the plan held and audited with its screenshot hash, and then either a person's
confirmation asked for (desktop notification, `kronii vision approve|deny`) or, when nothing is
flagged and the caller asked for it, execution under the broker's lease."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

from kronii.common.errors import FailedPrecondition, InvalidArgument
from kronii.vision.context_build import ContextBuilder
from kronii.vision.core.diff import diff_score
from kronii.vision.core.fingerprint import plan_fingerprint, screen_change
from kronii.vision.core.plans import PlanEvent, PlanState
from kronii.vision.core.safety import SafetyEvaluation, SafetyPolicy, evaluate
from kronii.vision.execution import Executor
from kronii.vision.plan_book import PlanBook, PlanRecord
from kronii.vision.ports import Audit, Clock, Planner

__all__ = ["MAX_INTENT", "Planning"]

log = logging.getLogger(__name__)

MAX_INTENT = 500
Ask = Callable[[PlanRecord], Awaitable[None]]


def _blocked(note: str) -> SafetyEvaluation:
    return SafetyEvaluation((), (), note or "the planner proposed no action", "EMPTY", (), ())


class Planning:
    def __init__(
        self,
        book: PlanBook,
        builder: ContextBuilder,
        planner: Planner,
        policy: SafetyPolicy,
        executor: Executor,
        audit: Audit,
        clock: Clock,
        *,
        ask: Ask | None = None,
        observe: Callable[[str], None] = lambda outcome: None,
        observe_rows: Callable[[Sequence[str]], None] = lambda rows: None,
    ) -> None:
        self._book = book
        self._builder = builder
        self._planner = planner
        self._policy = policy
        self._executor = executor
        self._audit = audit
        self._clock = clock
        self._ask = ask
        self._observe = observe
        self._observe_rows = observe_rows
        self._running: set[asyncio.Task[None]] = set()
        self._desktop = asyncio.Lock()
        executor.replan = self.replan

    async def make(
        self, intent: str, requester: str, *, execute: bool, previous: Sequence[str] = ()
    ) -> PlanRecord:
        said = " ".join(intent.split())
        if not said:
            raise InvalidArgument("say what to do: the intent is empty", field="intent")
        if len(said) > MAX_INTENT:
            raise InvalidArgument(f"an intent is at most {MAX_INTENT} characters", field="intent")
        built = await self._builder.build(previous)
        answer = await self._planner.plan(said, built.context)
        evaluation = (
            evaluate(answer.actions, built.context, self._policy) if answer.actions else _blocked(answer.note)
        )
        state = (
            PlanState.BLOCKED if not evaluation.runnable
            else PlanState.AWAITING_CONFIRMATION if evaluation.requires_confirmation
            else PlanState.READY
        )  # fmt: skip
        record = PlanRecord(
            id=self._book.new_id(), intent=said, requester=requester, created_ms=self._clock.now_ms(),
            backend=answer.backend, context=built.context, frame=built.frame, evaluation=evaluation,
            fingerprint=plan_fingerprint(built.context, evaluation.actions), state=state,
            reason=evaluation.blocked, note="; ".join(built.context.notes), model_call=answer.call,
        )  # fmt: skip
        self._book.add(record)
        self._observe(state.value)
        self._observe_rows(evaluation.rows_fired)
        await self._audit.record(
            "vision.plan", record.id, state.value, intent=said, requester=requester, backend=answer.backend,
            screenshot_hash=built.context.screenshot_hash, fingerprint=record.fingerprint,
            safety_rows=",".join(evaluation.rows_fired), reason=record.reason,
        )  # fmt: skip
        if state is PlanState.AWAITING_CONFIRMATION and self._ask is not None:
            await self._ask(record)
        elif state is PlanState.READY and execute:
            self._start(record)
        return record

    async def approve(self, plan_id: str, actor: str) -> PlanRecord:
        """A person's yes, bound to the screen they saw: a changed screen is planned again instead."""
        record = self._book.get(plan_id)
        if record.state is not PlanState.AWAITING_CONFIRMATION:
            self._book.move(record, PlanEvent.APPROVE, self._clock.now_ms())  # raises the table's sentence
        fresh = await self._builder.build(with_screenshot=False, fresh=True)
        diff = diff_score(record.frame, fresh.frame) if record.frame is not None else 0.0
        change = screen_change(record.context, fresh.context, diff)
        if change:
            self._book.move(record, PlanEvent.SCREEN_CHANGED, self._clock.now_ms(), change)
            await self._audit.record(
                "vision.plan.approval_refused", record.id, "stale", actor=actor, reason=change,
                screenshot_hash=record.context.screenshot_hash, fingerprint=record.fingerprint,
            )  # fmt: skip
            again = await self.replan(record, change)
            record.replanned_as = again.id if again is not None else ""
            then = f"; planned again as {again.id}: see `kronii vision show {again.id}`" if again else ""
            raise FailedPrecondition(f"approval refused: {change}{then}")
        self._book.move(record, PlanEvent.APPROVE, self._clock.now_ms())
        record.approved_by = actor
        await self._audit.record(
            "vision.plan.approved", record.id, "approved", actor=actor,
            screenshot_hash=record.context.screenshot_hash, fingerprint=record.fingerprint,
        )  # fmt: skip
        self._start(record)
        return record

    def run(self, plan_id: str) -> PlanRecord:
        """Run a plan that nothing flagged (one made with execute false); a flagged one needs approve."""
        record = self._book.get(plan_id)
        if record.state is not PlanState.READY:
            self._book.move(record, PlanEvent.START, self._clock.now_ms())  # raises the table's sentence
        self._start(record)
        return record

    async def deny(self, plan_id: str, actor: str) -> PlanRecord:
        record = self._book.get(plan_id)
        self._book.move(record, PlanEvent.DENY, self._clock.now_ms(), f"denied by {actor}")
        await self._audit.record(
            "vision.plan.denied", record.id, "denied", actor=actor,
            screenshot_hash=record.context.screenshot_hash, fingerprint=record.fingerprint,
        )  # fmt: skip
        return record

    async def replan(self, stale: PlanRecord, why: str) -> PlanRecord | None:
        """The same intent on the screen as it is now; it never runs without a fresh approval."""
        try:
            return await self.make(stale.intent, stale.requester, execute=False)
        except Exception:
            log.exception("vision: planning %r again after %s failed", stale.intent, why)
            return None

    def _start(self, record: PlanRecord) -> None:
        task = asyncio.create_task(self._execute(record), name=f"vision-plan-{record.id}")
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def _execute(self, record: PlanRecord) -> None:
        async with self._desktop:  # one plan at a time: there is one desktop
            try:
                await self._executor.run(record)
            except Exception:
                log.exception("vision: plan %s failed", record.id)
                if record.active:
                    self._book.move(record, PlanEvent.FAIL, self._clock.now_ms(), "the executor failed")

    async def drain(self) -> None:
        for task in list(self._running):
            task.cancel()
        await asyncio.gather(*self._running, return_exceptions=True)
