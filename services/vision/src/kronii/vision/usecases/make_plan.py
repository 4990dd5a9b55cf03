"""Making a plan (seed 001, steps 1-8): the screen's context, the planner's actions, the safety
layer's verdict, the plan held and audited with its screenshot hash, and a person's confirmation asked
for (desktop notification, `kronii vision approve|deny`) when the safety layer flagged it. Running it is
another use case's (request_plan, approve_plan, run_plan)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Protocol

from kronii.foundation.audit_trail import AuditTrail
from kronii.foundation.clock import Clock
from kronii.foundation.errors import InvalidArgument
from kronii.vision.core.actions import ActionType
from kronii.vision.core.commands import PlanCommand
from kronii.vision.core.context import ScreenContext
from kronii.vision.core.fingerprint import plan_fingerprint
from kronii.vision.core.plan_book import PlanBook, PlanRecord
from kronii.vision.core.plans import PlanState
from kronii.vision.core.safety import SafetyEvaluation, SafetyPolicy, evaluate
from kronii.vision.ports import Ask, Planner
from kronii.vision.usecases.build_context import ContextBuilder

__all__ = ["MAX_INTENT", "MakePlan", "Replanner"]

log = logging.getLogger(__name__)

MAX_INTENT = 500


class Replanner(Protocol):
    """What plans a stale plan's intent again (the executor and the screen watch need only this)."""

    async def replan(self, stale: PlanRecord, why: str) -> PlanRecord | None: ...


def _on_the_window(evaluation: SafetyEvaluation) -> bool:
    """Whether the plan acts on the window in front (or found nothing there): opening an app or
    waiting does not depend on it."""
    off_screen = (ActionType.OPEN_APP, ActionType.WAIT)
    return not evaluation.actions or any(a.type not in off_screen for a in evaluation.actions)


def _blocked(note: str, context: ScreenContext) -> SafetyEvaluation:
    """No action: the planner's sentence, with the window it looked in when it names none it found
    (a person reading "nothing named 'Send'" wants to know which window that was)."""
    said = note or "the planner proposed no action"
    window = context.window
    if "window in front" in said and window is not None:
        said += f" ({window.title or 'untitled'!r}, {window.app})"
    return SafetyEvaluation((), (), said, "EMPTY", (), ())


class MakePlan:
    def __init__(
        self,
        book: PlanBook,
        builder: ContextBuilder,
        planner: Planner,
        policy: SafetyPolicy,
        audit: AuditTrail,
        clock: Clock,
        *,
        ask: Ask | None = None,
        tree_first: bool = False,
        observe: Callable[[str], None] = lambda outcome: None,
        observe_rows: Callable[[Sequence[str]], None] = lambda rows: None,
    ) -> None:
        self._book = book
        self._builder = builder
        self._planner = planner
        self._policy = policy
        self._audit = audit
        self._clock = clock
        self._ask = ask
        # The rules plan from the tree: the screenshot (capture and OCR, most of a plan's time) is
        # taken only when the tree alone names nothing.
        self._tree_first = tree_first
        self._observe = observe
        self._observe_rows = observe_rows

    async def __call__(self, command: PlanCommand) -> PlanRecord:
        """The plan, held: blocked, awaiting a person's confirmation (asked for), or ready."""
        said = " ".join(command.intent.split())
        if not said:
            raise InvalidArgument("say what to do: the intent is empty", field="intent")
        if len(said) > MAX_INTENT:
            raise InvalidArgument(f"an intent is at most {MAX_INTENT} characters", field="intent")
        built = await self._builder.build(with_screenshot=not self._tree_first)
        answer = await self._planner.plan(said, built.context)
        if self._tree_first and not answer.actions and self._builder.has_screenshots:
            built = await self._builder.build()
            answer = await self._planner.plan(said, built.context)
        evaluation = (
            evaluate(answer.actions, built.context, self._policy)
            if answer.actions
            else _blocked(answer.note, built.context)
        )
        if built.context.window_problem and _on_the_window(evaluation):
            # The window in front and its accessibility tree disagree: nothing named there can be trusted.
            evaluation = SafetyEvaluation((), (), built.context.window_problem, "WINDOW", (), ())
        state = (
            PlanState.BLOCKED if not evaluation.runnable
            else PlanState.AWAITING_CONFIRMATION if evaluation.requires_confirmation
            else PlanState.READY
        )  # fmt: skip
        record = PlanRecord(
            id=self._book.new_id(), intent=said, requester=command.requester,
            created_ms=self._clock.wall_ms(), backend=answer.backend, context=built.context,
            frame=built.frame, evaluation=evaluation,
            fingerprint=plan_fingerprint(built.context, evaluation.actions), state=state,
            reason=evaluation.blocked, note="; ".join(built.context.notes), model_call=answer.call,
        )  # fmt: skip
        self._book.add(record)
        self._observe(state.value)
        self._observe_rows(evaluation.rows_fired)
        await self._audit(
            actor="vision", action="vision.plan", subject=record.id, outcome=state.value, intent=said,
            requester=command.requester, backend=answer.backend,
            screenshot_hash=built.context.screenshot_hash, fingerprint=record.fingerprint,
            safety_rows=",".join(evaluation.rows_fired), reason=record.reason,
        )  # fmt: skip
        if state is PlanState.AWAITING_CONFIRMATION and self._ask is not None:
            await self._ask(record)
        return record

    async def replan(self, stale: PlanRecord, why: str) -> PlanRecord | None:
        """The same intent on the screen as it is now; it never runs without a fresh approval."""
        try:
            return await self(PlanCommand(stale.intent, stale.requester, execute=False))
        except Exception:
            log.exception("vision: planning %r again after %s failed", stale.intent, why)
            return None
