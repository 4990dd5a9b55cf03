"""The Decisions page: the pipeline's runs, newest first, each with what woke it, the route, the
redaction level of its context, the roles that ran (rules or a model, fallbacks, cost) and why it
notified or stayed silent; and the snoozes and mutes in force. A pipeline that does not answer is a
sentence on the page."""

from __future__ import annotations

from dataclasses import dataclass

from kronii.console.core.decisions import Control, Decision
from kronii.console.ports import PipelineDecisions
from kronii.foundation.errors import InvalidArgument, KroniiError

__all__ = ["DecisionsView", "ShowDecisions"]

PAGE_SIZE = 25
# `before` is epoch seconds; later than 2100 is a mistake.
_LATEST = 4_102_444_800.0


@dataclass(frozen=True)
class DecisionsView:
    runs: tuple[Decision, ...]
    next_before: float | None
    controls: tuple[Control, ...]
    total_cost: float
    problems: tuple[str, ...]


def parse_before(text: str) -> float | None:
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise InvalidArgument("before is a time in seconds since 1970") from None
    if not 0 <= value <= _LATEST:
        raise InvalidArgument("before is a time in seconds since 1970")
    return value


class ShowDecisions:
    def __init__(self, pipeline: PipelineDecisions) -> None:
        self._pipeline = pipeline

    async def view(self, before_text: str = "") -> DecisionsView:
        before = parse_before(before_text)
        problems: list[str] = []
        runs: list[Decision] = []
        following: float | None = None
        controls: list[Control] = []
        try:
            runs, following = await self._pipeline.runs(PAGE_SIZE, before)
        except KroniiError as error:
            problems.append(str(error))
        try:
            controls = await self._pipeline.controls()
        except KroniiError as error:
            if not problems:
                problems.append(str(error))
        return DecisionsView(
            runs=tuple(runs),
            next_before=following,
            controls=tuple(control for control in controls if control.muted or control.snoozed_until),
            total_cost=sum(run.cost for run in runs),
            problems=tuple(problems),
        )
