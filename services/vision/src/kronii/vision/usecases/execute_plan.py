"""The executor (seed 001, step 9): a plan's actions, one at a time, under the input broker's lease.

Before each action: the broker's safe point (STOP or PAUSE ends the run at once: nothing after it
runs), a fresh look at the screen, and R6. Before the first, the approval's binding: a screen that is
not the approved one (tree or pixels) is planned again instead of executed. Actions are semantic
first (AT-SPI Action / EditableText on the element); a click by bounds, converted once from
screenshot or logical pixels to screen pixels (core/pixels.py), only when the element has no action
or the plan has no element. Every action and decision is audited with the screenshot hash."""

from __future__ import annotations

import contextlib
import inspect
import logging
from collections.abc import Awaitable, Callable

from kronii.foundation.audit_trail import AuditTrail
from kronii.foundation.clock import Clock
from kronii.vision.core.actions import Action
from kronii.vision.core.context import Built, ScreenContext
from kronii.vision.core.fingerprint import binding_change
from kronii.vision.core.plan_book import PlanBook, PlanRecord
from kronii.vision.core.plans import PlanEvent
from kronii.vision.core.revalidation import refusal
from kronii.vision.ports import Accessibility, DesktopControl, Launcher, LeaseRefused
from kronii.vision.usecases.build_context import ContextBuilder
from kronii.vision.usecases.make_plan import Replanner
from kronii.vision.usecases.perform_action import ActionFailed, PerformAction
from kronii.vision.usecases.window_guard import bind
from kronii.vision.usecases.window_guard import refusal as window_refusal

__all__ = ["Executor"]

log = logging.getLogger(__name__)


class _Halt(Exception):
    """The run ends here: `event` is how (STOP, FAIL, SCREEN_CHANGED), `reason` why."""

    def __init__(self, event: PlanEvent, reason: str) -> None:
        super().__init__(reason)
        self.event = event
        self.reason = reason


class Executor:
    def __init__(
        self,
        book: PlanBook,
        builder: ContextBuilder,
        accessibility: Accessibility,
        control: DesktopControl,
        launcher: Launcher,
        audit: AuditTrail,
        clock: Clock,
        *,
        replanner: Replanner | None = None,
        lease_seconds: int = 30,
        observe: Callable[[str, str], None] = lambda kind, outcome: None,
        observe_effect: Callable[[str, bool], None] = lambda effect, seen: None,
    ) -> None:
        self._book = book
        self._builder = builder
        self._tree = accessibility
        self._control = control
        self._launcher = launcher
        self._audit = audit
        self._clock = clock
        self._lease_seconds = lease_seconds
        self._observe = observe
        self._replanner = replanner
        self._act = PerformAction(accessibility, control, launcher, self._input, observe=observe_effect)

    async def run(self, record: PlanRecord) -> None:
        self._book.move(record, PlanEvent.START, self._clock.wall_ms())
        try:
            await self._control.acquire(self._lease_seconds)
        except LeaseRefused as refused:
            await self._end(record, PlanEvent.FAIL, f"the input broker did not give the desktop: {refused}")
            return
        try:
            await self._steps(record)
        except _Halt as halt:
            await self._end(record, halt.event, halt.reason)
            if halt.event is PlanEvent.SCREEN_CHANGED and self._replanner is not None:
                again = await self._replanner.replan(record, halt.reason)
                record.replanned_as = again.id if again is not None else ""
            return
        finally:
            with contextlib.suppress(LeaseRefused):
                await self._control.release()
        await self._end(record, PlanEvent.FINISH, "")

    async def _end(self, record: PlanRecord, event: PlanEvent, reason: str) -> None:
        self._book.move(record, event, self._clock.wall_ms(), reason)
        await self._audit(
            actor="vision", action=f"vision.plan.{record.state.value}", subject=record.id,
            outcome=record.state.value, reason=reason, screenshot_hash=record.context.screenshot_hash,
            fingerprint=record.fingerprint,
        )  # fmt: skip

    async def _steps(self, record: PlanRecord) -> None:
        bind(record.context.window)  # input through the broker goes to this X window, or nowhere
        for sequence, action in enumerate(record.evaluation.actions):
            await self._safe_point(record, sequence)
            # The first step may reuse the tree the plan or its approval just read, when no object
            # event said it changed since (DesktopTree's cache); every later step follows an action.
            fresh = await self._builder.build(with_screenshot=False, fresh=sequence > 0)
            if sequence == 0:
                self._check_binding(record, fresh)
            problem = refusal(action, record.context, fresh.raw, confirmed=bool(record.approved_by))
            if problem:
                raise _Halt(PlanEvent.FAIL, problem)
            try:
                how = await self._perform(action, record.context, fresh)
            except _Halt:
                self._observe(action.type.value, "failed")
                raise
            self._observe(action.type.value, "done")
            record.results.append({"index": sequence, "action": action.describe(), "how": how})
            await self._audit(
                actor="vision", action="vision.action", subject=record.id, outcome="done", index=sequence,
                step=action.describe(), how=how, screenshot_hash=record.context.screenshot_hash,
            )  # fmt: skip

    async def _safe_point(self, record: PlanRecord, sequence: int) -> None:
        try:
            decision = await self._control.safe_point(f"{record.id}/{sequence}", sequence)
        except LeaseRefused as refused:
            raise _Halt(PlanEvent.STOP, f"the person took the desktop back: {refused}") from None
        if decision == "STOP":
            raise _Halt(PlanEvent.STOP, "the person stopped the agent (STOP_NOW): nothing more runs")
        if decision == "TAKEN_BACK":
            raise _Halt(
                PlanEvent.STOP, "the person took the desktop back (their own input): nothing more runs"
            )
        if decision != "CONTINUE":
            raise _Halt(PlanEvent.STOP, "the person paused the agent at this safe point")

    @staticmethod
    def _check_binding(record: PlanRecord, fresh: Built) -> None:
        change = binding_change(record.context, record.frame, fresh.context, fresh.frame)
        if change:
            raise _Halt(PlanEvent.SCREEN_CHANGED, change)

    async def _perform(self, action: Action, approved: ScreenContext, fresh: Built) -> str:
        try:
            return await self._act(action, approved, fresh)
        except ActionFailed as failed:
            raise _Halt(PlanEvent.FAIL, str(failed)) from None

    async def _input(self, sent: Awaitable[None]) -> None:
        elsewhere = await window_refusal(self._builder)
        if elsewhere:
            if inspect.iscoroutine(sent):
                sent.close()  # never sent: the broker saw nothing
            raise _Halt(PlanEvent.FAIL, elsewhere)
        try:
            await sent
        except LeaseRefused as refused:
            raise _Halt(PlanEvent.STOP, f"the broker dropped the input: {refused}") from None
