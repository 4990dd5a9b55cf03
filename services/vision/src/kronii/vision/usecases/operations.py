"""VisionOperations: the one door the API (HTTP, gRPC, the bus, the notification's buttons) calls.
Each call takes a command or an id, hands it to its use case and answers in core types: a plan as
it stands (PlanView), the context as built."""

from __future__ import annotations

from kronii.vision.core.commands import CallFacts, ConfirmationAnswer, PlanCommand, PlanDecision
from kronii.vision.core.context import Built
from kronii.vision.core.plan_book import PlanBook, PlanView
from kronii.vision.ports import PersonCheck
from kronii.vision.usecases.answer_confirmation import AnswerConfirmation
from kronii.vision.usecases.approve_plan import ApprovePlan
from kronii.vision.usecases.build_context import ContextBuilder
from kronii.vision.usecases.deny_plan import DenyPlan
from kronii.vision.usecases.request_plan import RequestPlan
from kronii.vision.usecases.run_plan import RunPlan
from kronii.vision.usecases.watch_screen import ScreenWatch

__all__ = ["VisionOperations"]


class VisionOperations:
    def __init__(
        self,
        book: PlanBook,
        builder: ContextBuilder,
        *,
        request: RequestPlan,
        approve: ApprovePlan,
        deny: DenyPlan,
        run: RunPlan,
        answer: AnswerConfirmation,
        watch: ScreenWatch,
        people: PersonCheck,
    ) -> None:
        self._book = book
        self._builder = builder
        self._request = request
        self._approve = approve
        self._deny = deny
        self._run = run
        self._answer = answer
        self._watch = watch
        self._people = people

    async def plan(self, command: PlanCommand) -> PlanView:
        return PlanView.of(await self._request(command))

    def plans(self) -> tuple[PlanView, ...]:
        """The plans held, newest first."""
        return tuple(PlanView.of(record) for record in self._book.all())

    def show(self, plan_id: str) -> PlanView:
        return PlanView.of(self._book.get(plan_id))

    async def person(self, facts: CallFacts) -> str:
        """The person behind a call on the local socket ("person:uid:N"), or PermissionDenied."""
        return await self._people.person(facts)

    async def approve(self, decision: PlanDecision) -> PlanView:
        return PlanView.of(await self._approve(decision))

    async def deny(self, decision: PlanDecision) -> PlanView:
        return PlanView.of(await self._deny(decision))

    def run(self, plan_id: str) -> PlanView:
        return PlanView.of(self._run(plan_id))

    async def context(self) -> Built:
        """What a plan would see now."""
        return await self._builder.build()

    async def answer(self, answer: ConfirmationAnswer) -> None:
        await self._answer(answer)

    def focus_changed(self) -> None:
        """The sensor saw the focus move: the screen watch looks again at its next tick."""
        self._watch.focus_changed()
