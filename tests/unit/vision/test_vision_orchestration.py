"""The use cases in process: make_plan, request_plan, approve_plan, deny_plan, run_plan, execute_plan,
watch_screen and the plan book with fakes of every port. One log records what was done to the desktop, in order, across the fakes (the
broker's lease and safe points, AT-SPI actions, broker input, launches), so each test can say exactly
what ran and what never did."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pytest
from kronii.foundation.clock import ManualClock
from kronii.foundation.errors import FailedPrecondition
from kronii.vision.core.actions import Action, ActionType
from kronii.vision.core.commands import PlanAnswer, PlanCommand, PlanDecision
from kronii.vision.core.context import Bounds, Frame, OcrZone, RawNode, ScreenContext
from kronii.vision.core.gate import Cadence
from kronii.vision.core.plan_book import PlanBook, PlanRecord
from kronii.vision.core.plans import PlanState
from kronii.vision.core.rules_planner import RulesPlanner
from kronii.vision.core.safety import SafetyPolicy
from kronii.vision.ports import LeaseRefused
from kronii.vision.usecases.approve_plan import ApprovePlan
from kronii.vision.usecases.build_context import ContextBuilder
from kronii.vision.usecases.deny_plan import DenyPlan
from kronii.vision.usecases.execute_plan import Executor
from kronii.vision.usecases.make_plan import MakePlan
from kronii.vision.usecases.request_plan import RequestPlan
from kronii.vision.usecases.run_plan import RunPlan
from kronii.vision.usecases.watch_screen import ScreenWatch

NOW_MS = 1_700_000_000_000
SHOT_HASH = "5e" * 32
PERSON = "person:uid:1000"
# capture's frame of the window: 800x600 pixels showing the 1600x1200 X pixels at (100, 200).
WINDOW_AREA = (100, 200, 1600, 1200)


def raw(
    ref: str, role: str, name: str, box: Bounds, *, actions: tuple[str, ...] = (), depth: int = 1
) -> RawNode:
    return RawNode(
        ref=f"app7|/{ref}", role=role, name=name, states=frozenset({"active"}) if depth == 0 else frozenset(),
        bounds=box, actions=actions, editable=role == "entry", text="", depth=depth, parent=None,
        window_title="Sign up", pid=7,
    )  # fmt: skip


FORM = (
    raw("w", "frame", "Sign up", Bounds(50, 100, 800, 600), depth=0),  # e1
    raw("save", "push button", "Save", Bounds(60, 150, 40, 15), actions=("click",)),  # e2
    raw("name", "entry", "Name", Bounds(60, 120, 200, 15)),  # e3
    raw("help", "push button", "Help", Bounds(100, 50, 40, 20)),  # e4: no AT-SPI action
)
CLICK_SAVE = Action(ActionType.CLICK_BY_BOUNDS, target="Save", ui_element_id="e2")
TYPE_NAME = Action(ActionType.TYPE_TEXT, text="Ada", target="Name", ui_element_id="e3")


class FakeClock(ManualClock):
    def __init__(self) -> None:
        super().__init__(NOW_MS / 1000)


class FakeAccessibility:
    """A scripted application: its tree, which `then` replaces after the first AT-SPI action, and
    which shows what was done to it (a pressed button's count in a status label, a field's text),
    as a real application would, so that the executor's look for each action's effect finds it.
    `inert` makes it an application on which nothing has any effect."""

    def __init__(self, log: list[str], nodes: tuple[RawNode, ...]) -> None:
        self.log = log
        self.nodes = nodes
        self.then: tuple[RawNode, ...] | None = None
        self.writable = True  # set_text works (EditableText)
        self.focusable = True
        self.inert = False
        self.focus = ""
        self.presses = 0

    async def snapshot(self, fresh: bool = False) -> tuple[RawNode, ...]:
        return self.nodes

    def mark(self) -> int:
        return 0

    def heard_since(self, mark: int) -> tuple[tuple[str, str], ...]:
        return ()  # its changes are in its tree

    def _status(self) -> None:
        self.presses += 1
        status = raw("status", "label", f"pressed {self.presses}", Bounds(60, 600, 100, 15))
        self.nodes = (*(n for n in self.nodes if n.ref != status.ref), status)

    def _text(self, ref: str, text: str) -> None:
        self.nodes = tuple(replace(n, text=text) if n.ref == ref else n for n in self.nodes)

    async def do_action(self, ref: str, name: str = "click") -> bool:
        self.log.append(f"do_action {ref} {name}")
        if self.then is not None:
            self.nodes, self.then = self.then, None
        elif not self.inert:
            self._status()
        return True

    async def set_text(self, ref: str, text: str) -> bool:
        self.log.append(f"set_text {ref} {text}")
        if self.writable and not self.inert:
            self._text(ref, text)
        return self.writable

    async def grab_focus(self, ref: str) -> bool:
        self.log.append(f"grab_focus {ref}")
        if self.focusable:
            self.focus = ref
            self.nodes = tuple(
                replace(n, states=n.states | {"focused"} if n.ref == ref else n.states - {"focused"})
                for n in self.nodes
            )
        return self.focusable

    async def select(self, ref: str, parent: str) -> bool:
        self.log.append(f"select {ref}")
        return False

    def clicked(self) -> None:
        """A click through the broker landed on the application."""
        if not self.inert:
            self._status()

    def typed(self, text: str) -> None:
        """Keys through the broker reached the focused field."""
        if self.focus and not self.inert:
            old = next(n.text for n in self.nodes if n.ref == self.focus)
            self._text(self.focus, old + text)


class FakeFrames:
    def __init__(self) -> None:
        self.frame = np.full((135, 240), 90, dtype=np.uint8)
        self.grabs = 0

    def grab(self) -> np.ndarray:
        self.grabs += 1
        return self.frame.copy()

    def screen_size(self) -> tuple[int, int]:
        return 1920, 1080

    def front_window(self) -> tuple[int, Bounds] | None:
        return None  # no X window to compare with: the configured scale stands

    def desk(self) -> None:
        return None  # no X server: the tree's own guess of the window in front stands


class FakeScreenshots:
    async def focused_window(self) -> Frame:
        return Frame("shot-1", SHOT_HASH, b"\x89PNG", (800, 600), WINDOW_AREA)


class FakeOcr:
    def __init__(self, zones: tuple[OcrZone, ...]) -> None:
        self.zones = zones

    def read(self, png: bytes) -> tuple[OcrZone, ...]:
        return self.zones


class FakeControl:
    """The input broker: answers STOP at safe point `stop_at`, or refuses the lease with `refuse`."""

    def __init__(self, log: list[str], stop_at: int | None, refuse: str, app: FakeAccessibility) -> None:
        self.log = log
        self.stop_at = stop_at
        self.refuse = refuse
        self.app = app

    async def acquire(self, lease_seconds: int) -> None:
        if self.refuse:
            raise LeaseRefused(self.refuse)
        self.log.append("acquire")

    async def safe_point(self, step: str, sequence: int) -> str:
        self.log.append(f"safe_point {sequence}")
        return "STOP" if sequence == self.stop_at else "CONTINUE"

    async def click(self, x: int, y: int) -> None:
        self.log.append(f"click {x} {y}")
        self.app.clicked()

    async def type_text(self, text: str) -> None:
        self.log.append(f"type {text}")
        self.app.typed(text)

    async def release(self) -> None:
        self.log.append("release")


class FakeLauncher:
    """Starts an app: its window appears in the tree."""

    def __init__(self, log: list[str], app: FakeAccessibility) -> None:
        self.log = log
        self.app = app

    def open(self, app: str) -> None:
        self.log.append(f"open {app}")
        window = replace(raw(f"{app}-window", "frame", app, Bounds(0, 0, 400, 300), depth=0), pid=99)
        self.app.nodes = (*self.app.nodes, window)


@dataclass
class FakeAudit:
    rows: list[tuple[str, str, str, dict[str, Any]]] = field(default_factory=list)

    async def __call__(
        self, *, actor: str, action: str, subject: str = "", outcome: str = "", **detail: Any
    ) -> None:
        self.rows.append((action, subject, outcome, detail))

    def actions(self) -> list[str]:
        return [row[0] for row in self.rows]


class FakePlanner:
    """The rules planner, or `actions` when given; counts its calls (R1: a skipped tick makes none)."""

    def __init__(self, actions: tuple[Action, ...]) -> None:
        self.actions = actions
        self.calls = 0

    async def plan(self, intent: str, context: ScreenContext) -> PlanAnswer:
        self.calls += 1
        if self.actions:
            return PlanAnswer(self.actions, "", "scripted")
        return await RulesPlanner().plan(intent, context)


class Planning:
    """The plan use cases as the tests drive them, over one book: make (and run when asked), approve,
    deny, run; and what plans a stale plan again, for the screen watch."""

    def __init__(self, make: MakePlan, runs: RunPlan, approve: ApprovePlan, deny: DenyPlan) -> None:
        self._make, self._runs, self._approve, self._deny = make, runs, approve, deny
        self._request = RequestPlan(make, runs)

    async def make(self, intent: str, requester: str, *, execute: bool) -> PlanRecord:
        return await self._request(PlanCommand(intent, requester, execute))

    async def approve(self, plan_id: str, actor: str) -> PlanRecord:
        return await self._approve(PlanDecision(plan_id, actor))

    async def deny(self, plan_id: str, actor: str) -> PlanRecord:
        return await self._deny(PlanDecision(plan_id, actor))

    def run(self, plan_id: str) -> PlanRecord:
        return self._runs(plan_id)

    async def replan(self, stale: PlanRecord, why: str) -> PlanRecord | None:
        return await self._make.replan(stale, why)


@dataclass
class Rig:
    log: list[str]
    tree: FakeAccessibility
    frames: FakeFrames
    audit: FakeAudit
    planner: FakePlanner
    book: PlanBook
    builder: ContextBuilder
    planning: Planning
    asked: list[str]


def rig(
    *actions: Action,
    stop_at: int | None = None,
    refuse: str = "",
    zones: tuple[OcrZone, ...] = (),
    scale: float = 1.0,
) -> Rig:
    log: list[str] = []
    clock, book, audit, asked = FakeClock(), PlanBook(), FakeAudit(), []
    tree, frames, planner = FakeAccessibility(log, FORM), FakeFrames(), FakePlanner(actions)
    builder = ContextBuilder(
        tree, frames, clock, screenshots=FakeScreenshots(), ocr=FakeOcr(zones), scale=scale
    )
    control = FakeControl(log, stop_at, refuse, tree)

    async def ask(record: PlanRecord) -> None:
        asked.append(record.id)

    policy = SafetyPolicy(allowed_apps=frozenset({"firefox"}))
    make = MakePlan(book, builder, planner, policy, audit, clock, ask=ask)
    executor = Executor(book, builder, tree, control, FakeLauncher(log, tree), audit, clock, replanner=make)
    runs = RunPlan(book, executor, clock)
    planning = Planning(
        make, runs, ApprovePlan(book, builder, make, runs, audit, clock), DenyPlan(book, audit, clock)
    )
    return Rig(log, tree, frames, audit, planner, book, builder, planning, asked)


async def settled(record: PlanRecord) -> PlanState:
    """The state `record` ends in once the run started for it is over."""

    async def ended() -> None:
        while record.state in (PlanState.READY, PlanState.EXECUTING):
            await asyncio.sleep(0.001)

    await asyncio.wait_for(ended(), 5)
    return record.state


async def grabbed_more_than(frames: FakeFrames, count: int) -> None:
    while frames.grabs <= count:
        await asyncio.sleep(0.005)


async def test_an_unflagged_plan_with_execute_runs_under_the_lease_with_a_safe_point_before_each_action() -> (
    None
):
    desk = rig(CLICK_SAVE, TYPE_NAME)
    record = await desk.planning.make("sign me up as Ada", PERSON, execute=True)
    await settled(record)
    assert record.state is PlanState.DONE
    assert desk.log == [
        "acquire",
        "safe_point 0",
        "do_action app7|/save click",
        "safe_point 1",
        "set_text app7|/name Ada",
        "release",
    ]
    assert desk.asked == []
    assert desk.audit.actions() == ["vision.plan", "vision.action", "vision.action", "vision.plan.done"]
    assert all(detail["screenshot_hash"] == SHOT_HASH for *_, detail in desk.audit.rows)


async def test_an_unflagged_plan_made_without_execute_waits_for_run() -> None:
    desk = rig(CLICK_SAVE)
    record = await desk.planning.make("press save", PERSON, execute=False)
    await asyncio.sleep(0.01)
    assert record.state is PlanState.READY and desk.log == []
    desk.planning.run(record.id)
    assert await settled(record) is PlanState.DONE
    assert "do_action app7|/save click" in desk.log


async def test_a_flagged_plan_awaits_confirmation_and_run_refuses_it() -> None:
    desk = rig()
    record = await desk.planning.make("open Firefox", PERSON, execute=True)  # P2: launching is confirmed
    assert record.state is PlanState.AWAITING_CONFIRMATION
    assert desk.asked == [record.id]
    with pytest.raises(FailedPrecondition, match="needs a person's approval before it runs"):
        desk.planning.run(record.id)
    await asyncio.sleep(0.01)
    assert desk.log == [] and record.state is PlanState.AWAITING_CONFIRMATION


async def test_approving_a_flagged_plan_runs_it() -> None:
    desk = rig()
    record = await desk.planning.make("open Firefox", PERSON, execute=False)
    await desk.planning.approve(record.id, PERSON)
    await settled(record)
    assert record.state is PlanState.DONE and record.approved_by == PERSON
    assert desk.log == ["acquire", "safe_point 0", "open Firefox", "release"]
    assert "vision.plan.approved" in desk.audit.actions()


async def test_deny_ends_the_plan_and_an_approval_after_it_is_refused() -> None:
    desk = rig()
    record = await desk.planning.make("open Firefox", PERSON, execute=False)
    await desk.planning.deny(record.id, PERSON)
    assert record.state is PlanState.DENIED and record.reason == f"denied by {PERSON}"
    with pytest.raises(FailedPrecondition, match="a plan that is denied cannot be approved"):
        await desk.planning.approve(record.id, PERSON)
    await asyncio.sleep(0.01)
    assert desk.log == [] and record.state is PlanState.DENIED


@pytest.mark.parametrize("change", ["tree", "pixels"])
async def test_an_approval_after_the_screen_changed_is_refused_and_the_plan_is_made_again(
    change: str,
) -> None:
    desk = rig()
    record = await desk.planning.make("open Firefox", PERSON, execute=False)
    if change == "tree":
        desk.tree.nodes = (
            *FORM[:1],
            raw("save", "push button", "Delete all", Bounds(60, 150, 40, 15)),
            *FORM[2:],
        )
    else:
        desk.frames.frame = np.full((135, 240), 200, dtype=np.uint8)
    with pytest.raises(
        FailedPrecondition, match=r"approval refused: the (window's elements|screen) changed"
    ) as refused:
        await desk.planning.approve(record.id, PERSON)
    assert record.state is PlanState.STALE and record.approved_by == ""
    again = desk.book.get(record.replanned_as)
    assert again.intent == record.intent and again.state is PlanState.AWAITING_CONFIRMATION
    assert f"planned again as {again.id}" in refused.value.message
    assert desk.asked == [record.id, again.id] and desk.log == []
    assert "vision.plan.approval_refused" in desk.audit.actions()


async def test_stop_at_the_second_safe_point_stops_the_plan_and_the_second_action_never_runs() -> None:
    desk = rig(CLICK_SAVE, TYPE_NAME, stop_at=1)
    record = await desk.planning.make("sign me up as Ada", PERSON, execute=True)
    await settled(record)
    assert record.state is PlanState.STOPPED and "STOP_NOW" in record.reason
    assert desk.log == ["acquire", "safe_point 0", "do_action app7|/save click", "safe_point 1", "release"]
    assert [r["index"] for r in record.results] == [0]


async def test_a_lease_refused_at_acquire_fails_the_plan_with_the_brokers_sentence() -> None:
    desk = rig(CLICK_SAVE, refuse="the person is using the desktop")
    record = await desk.planning.make("press save", PERSON, execute=True)
    await settled(record)
    assert record.state is PlanState.FAILED
    assert record.reason == "the input broker did not give the desktop: the person is using the desktop"
    assert desk.log == []
    assert desk.audit.actions()[-1] == "vision.plan.failed"


async def test_r6_an_element_gone_before_its_step_fails_the_plan_and_is_never_touched() -> None:
    desk = rig(CLICK_SAVE, TYPE_NAME)
    desk.tree.then = FORM[:2] + FORM[3:]  # saving closes the Name field
    record = await desk.planning.make("sign me up as Ada", PERSON, execute=True)
    await settled(record)
    assert record.state is PlanState.FAILED
    assert record.reason == "R6: element e3 (entry 'Name') is no longer on the screen"
    assert not any(entry.startswith("set_text") for entry in desk.log)
    assert desk.log[-1] == "release"


async def test_a_click_on_an_element_without_actions_goes_through_the_broker_at_its_hidpi_centre() -> None:
    desk = rig(scale=2.0)
    record = await desk.planning.make("click the Help button", PERSON, execute=True)
    await settled(record)
    assert record.state is PlanState.DONE
    # Logical (100, 50, 40, 20) at scale 2 is (200, 100, 80, 40) in X pixels: its centre (240, 120).
    assert desk.log == ["acquire", "safe_point 0", "click 240 120", "release"]
    assert record.results[0]["how"].startswith("push button 'Help': a click at (240, 120) through the broker")
    assert record.results[0]["how"].endswith("seen: the application changed")


async def test_a_bounds_only_click_is_converted_from_screenshot_pixels() -> None:
    desk = rig(zones=(OcrZone("Submit", 0.95, Bounds(10, 10, 20, 10)),))
    record = await desk.planning.make("click Submit", PERSON, execute=True)
    await settled(record)
    assert record.state is PlanState.DONE
    # (10, 10, 20, 10) on the half-size shot is (120, 220, 40, 20) on the screen: centre (140, 230).
    assert desk.log == ["acquire", "safe_point 0", "click 140 230", "release"]


async def test_watch_skips_ticks_on_unchanged_frames_and_never_calls_the_planner() -> None:
    desk = rig()
    record = await desk.planning.make("open Firefox", PERSON, execute=False)
    watch = ScreenWatch(desk.book, desk.builder, desk.planning, FakeClock(), Cadence())
    decisions = [await watch.tick()]
    desk.frames.frame[0, 0] = 255  # one cell of 32,400 moved: under R1's 0.01
    decisions += [await watch.tick(), await watch.tick()]
    assert decisions == ["skipped"] * 3 and watch.ticks == {"skipped": 3, "changed": 0}
    assert desk.planner.calls == 1 and record.state is PlanState.AWAITING_CONFIRMATION


async def test_watch_makes_a_waiting_plan_stale_and_plans_again_when_the_screen_changes() -> None:
    desk = rig()
    record = await desk.planning.make("open Firefox", PERSON, execute=False)
    watch = ScreenWatch(desk.book, desk.builder, desk.planning, FakeClock(), Cadence())
    await watch.tick()
    desk.frames.frame = np.full((135, 240), 200, dtype=np.uint8)
    assert await watch.tick() == "changed"
    assert record.state is PlanState.STALE and record.reason.startswith("the screen changed")
    again = desk.book.get(record.replanned_as)
    assert again.state is PlanState.AWAITING_CONFIRMATION and desk.planner.calls == 2
    assert desk.asked == [record.id, again.id]


async def test_watch_treats_a_focus_change_as_a_changed_screen() -> None:
    desk = rig()
    record = await desk.planning.make("open Firefox", PERSON, execute=False)
    watch = ScreenWatch(desk.book, desk.builder, desk.planning, FakeClock(), Cadence())
    await watch.tick()
    watch.focus_changed()
    assert await watch.tick() == "changed"
    assert record.state is PlanState.STALE and record.reason == "the focus moved"


async def test_watch_grabs_nothing_while_no_plan_is_active() -> None:
    desk = rig()
    watch = ScreenWatch(desk.book, desk.builder, desk.planning, FakeClock(), Cadence(0.01, 0.02))
    assert Cadence().interval(plan_active=False, cpu_share=0.0) is None
    running = asyncio.create_task(watch.run())
    try:
        await asyncio.sleep(0.1)
        assert desk.frames.grabs == 0
        await desk.planning.make("open Firefox", PERSON, execute=False)
        made = desk.frames.grabs
        # A waiting plan is watched: the quiet above was the cadence, not a watch that never ticks.
        await asyncio.wait_for(grabbed_more_than(desk.frames, made), 5)
    finally:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running


async def test_a_field_without_editable_text_gets_the_focus_before_the_keys_through_the_broker() -> None:
    desk = rig(TYPE_NAME)
    desk.tree.writable = False
    record = await desk.planning.make("type Ada into Name", PERSON, execute=True)
    await settled(record)
    assert record.state is PlanState.DONE
    assert desk.log == [
        "acquire", "safe_point 0", "set_text app7|/name Ada", "grab_focus app7|/name", "type Ada", "release",
    ]  # fmt: skip


async def test_a_field_that_will_not_take_the_focus_fails_the_plan_and_no_keys_are_typed() -> None:
    desk = rig(TYPE_NAME)
    desk.tree.writable, desk.tree.focusable = False, False
    record = await desk.planning.make("type Ada into Name", PERSON, execute=True)
    await settled(record)
    assert record.state is PlanState.FAILED
    assert record.reason == "entry 'Name' would not take the focus, so no keys were typed"
    assert not any(entry.startswith("type ") for entry in desk.log)
    assert desk.log[-1] == "release"


async def test_a_name_found_nowhere_blocks_the_plan_naming_the_window_it_looked_in() -> None:
    desk = rig()
    record = await desk.planning.make("click the Frobnicate button", PERSON, execute=True)
    assert record.state is PlanState.BLOCKED
    # Without X facts no window is named.
    assert record.reason == "nothing named 'Frobnicate' is in the window in front"
