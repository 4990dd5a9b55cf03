"""A plan made while the window in front and its accessibility tree disagree is blocked with the
sentence (usecases/make_plan.py over core/front.py), in process: a fake tree and a fake X server."""

from __future__ import annotations

from typing import Any

import numpy as np
from kronii.foundation.clock import ManualClock
from kronii.vision.core.actions import Action, ActionType
from kronii.vision.core.commands import PlanAnswer, PlanCommand
from kronii.vision.core.context import Bounds, RawNode, ScreenContext
from kronii.vision.core.front import XDesk, XWindow
from kronii.vision.core.plan_book import PlanBook
from kronii.vision.core.plans import PlanState
from kronii.vision.core.safety import SafetyPolicy
from kronii.vision.usecases.build_context import ContextBuilder
from kronii.vision.usecases.make_plan import MakePlan

DIALOG = (
    RawNode("app20|/d", "dialog", "Question", frozenset({"active"}), Bounds(300, 300, 200, 120), (), False, "",
            1, None, window_title="Question", pid=20),
    RawNode("app20|/ok", "push button", "OK", frozenset(), Bounds(320, 380, 60, 24), ("click",), False, "",
            2, None, window_title="Question", pid=20),
)  # fmt: skip
# A terminal (pid 30, no tree on the bus) in front of the dialog.
TERMINAL = XWindow(0x500001, 30, "Plain terminal", "XTerm", Bounds(0, 0, 640, 400), executable="xterm")
DIALOG_X = XWindow(0x400001, 20, "Question", "Zenity", Bounds(300, 300, 200, 120), toolkit="gtk")


class Tree:
    async def snapshot(self, fresh: bool = False) -> tuple[RawNode, ...]:
        return DIALOG


class Screen:
    def __init__(self, focus: XWindow) -> None:
        self.focus = focus

    def grab(self) -> np.ndarray:
        return np.zeros((96, 128), dtype=np.uint8)

    def screen_size(self) -> tuple[int, int]:
        return 1024, 768

    def front_window(self) -> None:
        return None

    def desk(self) -> XDesk:
        return XDesk(self.focus.window_id, self.focus.window_id, (DIALOG_X, self.focus))


class Scripted:
    def __init__(self, *actions: Action) -> None:
        self.actions = actions

    async def plan(self, intent: str, context: ScreenContext) -> PlanAnswer:
        return PlanAnswer(self.actions, "", "scripted")


async def audit(**row: Any) -> None:
    return None


def make_plan(focus: XWindow, *actions: Action) -> MakePlan:
    clock = ManualClock(1_700_000_000)
    builder = ContextBuilder(Tree(), Screen(focus), clock)  # type: ignore[arg-type]
    policy = SafetyPolicy(allowed_apps=frozenset({"firefox"}))
    return MakePlan(PlanBook(), builder, Scripted(*actions), policy, audit, clock)


async def test_a_click_planned_with_a_program_without_a_tree_in_front_is_blocked_with_the_sentence() -> None:
    click = Action(ActionType.CLICK_BY_BOUNDS, target="OK", ui_element_id="e2")
    plan = await make_plan(TERMINAL, click)(PlanCommand("click OK", "test", execute=False))
    assert plan.state is PlanState.BLOCKED
    assert plan.reason.startswith(
        "the window in front is 'Plain terminal' (XTerm, pid 30), but its accessibility"
    )
    assert plan.evaluation.blocked_by == "WINDOW" and plan.context.window is not None
    assert plan.context.window.x_id == TERMINAL.window_id


async def test_opening_an_app_does_not_depend_on_the_window_in_front() -> None:
    open_app = Action(ActionType.OPEN_APP, target="firefox")
    plan = await make_plan(TERMINAL, open_app)(PlanCommand("open firefox", "test", execute=False))
    assert plan.state is not PlanState.BLOCKED, plan.reason


async def test_the_same_click_with_the_dialog_in_front_is_not_blocked_by_the_window() -> None:
    click = Action(ActionType.CLICK_BY_BOUNDS, target="OK", ui_element_id="e2")
    plan = await make_plan(DIALOG_X, click)(PlanCommand("click OK", "test", execute=False))
    assert plan.evaluation.blocked_by != "WINDOW" and plan.context.window_problem == ""
