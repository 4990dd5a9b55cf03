"""The Control page's picture: who holds the desktop now and the time its lease has left (the input
broker), and the vision plans waiting for the person's yes with their flagged rows. Each service is
asked on its own: one that does not answer is a sentence on the page, the other is still shown."""

from __future__ import annotations

from dataclasses import dataclass

from kronii.console.core.control import DesktopState, PlanView, holder_sentence
from kronii.console.ports import InputBroker, VisionPlans
from kronii.foundation.clock import Clock
from kronii.foundation.errors import KroniiError

__all__ = ["ControlView", "ShowControl"]

# Plans that ended are shown below the waiting ones, the newest few.
RECENT_PLANS = 5


@dataclass(frozen=True)
class ControlView:
    desktop: DesktopState | None
    holder: str
    seconds_left: float | None
    waiting: tuple[PlanView, ...]
    recent: tuple[PlanView, ...]
    problems: tuple[str, ...]


class ShowControl:
    def __init__(self, broker: InputBroker, vision: VisionPlans, clock: Clock) -> None:
        self._broker = broker
        self._vision = vision
        self._clock = clock

    async def view(self) -> ControlView:
        problems: list[str] = []
        desktop: DesktopState | None = None
        plans: list[PlanView] = []
        try:
            desktop = await self._broker.state()
        except KroniiError as error:
            problems.append(str(error))
        try:
            plans = await self._vision.plans()
        except KroniiError as error:
            problems.append(str(error))
        now = self._clock.wall()
        return ControlView(
            desktop=desktop,
            holder=holder_sentence(desktop, now) if desktop else "unknown: the input broker did not answer",
            seconds_left=desktop.seconds_left(now) if desktop else None,
            waiting=tuple(p for p in plans if p.waiting),
            recent=tuple(p for p in plans if not p.waiting)[:RECENT_PLANS],
            problems=tuple(problems),
        )

    async def plan(self, plan_id: str) -> PlanView:
        return await self._vision.plan(plan_id)
