"""The safety layer's table (core/safety.py ROWS), one test per row, and the order the rows are read in:
a BLOCK ends the plan, a DROP ends one action, every CONFIRM that applies adds its reason."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

import pytest
from kronii.vision.core.actions import Action, ActionClass, ActionType
from kronii.vision.core.context import Bounds, OcrZone, ScreenContext, UiNode
from kronii.vision.core.safety import ROWS, ClassPolicy, SafetyEvaluation, SafetyPolicy, evaluate

Test = TypeVar("Test", bound=Callable[..., object])
_COVERED: set[str] = set()


def covers(row_id: str) -> Callable[[Test], Test]:
    """Marks a test as the one for `row_id`; the last test checks that every row has one."""

    def mark(test: Test) -> Test:
        _COVERED.add(row_id)
        return test

    return mark


def node(node_id: str, role: str, name: str, box: Bounds, *, depth: int = 1, secured: bool = False) -> UiNode:
    return UiNode(
        id=node_id, ref=f"app|/{node_id}", role=role, name=name, states=frozenset(), bounds=box,
        actions=("click",) if role == "push button" else (), editable=role in {"entry", "password text"},
        text="", depth=depth, secured=secured,
    )  # fmt: skip


TREE = (
    node("e1", "frame", "Sign up", Bounds(100, 50, 800, 600), depth=0),
    node("e2", "push button", "Save", Bounds(200, 150, 80, 30)),
    node("e3", "push button", "OK", Bounds(110, 450, 60, 30), depth=2),
    node("e4", "push button", "OK", Bounds(400, 450, 60, 30), depth=2),
    node("e5", "password text", "Password", Bounds(200, 250, 200, 30), secured=True),
    node("e6", "entry", "Name", Bounds(200, 200, 200, 30)),
)
SHARP = OcrZone("Submit", 0.95, Bounds(200, 200, 60, 20))
BLURRY = OcrZone("Subrnit", 0.3, Bounds(200, 300, 60, 20))


WINDOW_AREA = Bounds(100, 50, 800, 600)


def screen(capture_area: Bounds = WINDOW_AREA) -> ScreenContext:
    """An 800x600 screenshot of the window at `capture_area` on a 1920x1080 screen."""
    return ScreenContext(
        screenshot_id="shot-1", screenshot_hash="ab" * 32, screenshot_size=(800, 600),
        capture_area=capture_area, ocr=(SHARP, BLURRY), tree=TREE, focused_title="Sign up",
        screen_bounds=Bounds(0, 0, 1920, 1080), scale=1.0, taken_at_ms=1_700_000_000_000,
    )  # fmt: skip


FIREFOX_ONLY = SafetyPolicy(allowed_apps=frozenset({"firefox"}))


def judge(
    *actions: Action, policy: SafetyPolicy = FIREFOX_ONLY, context: ScreenContext | None = None
) -> SafetyEvaluation:
    return evaluate(actions, context or screen(), policy)


def click_at(box: Bounds, *, require_confirmation: bool = False) -> Action:
    return Action(ActionType.CLICK_BY_BOUNDS, bounds=box, require_confirmation=require_confirmation)


@covers("P1")
def test_row_p1_a_class_denied_by_policy_blocks_the_plan() -> None:
    no_input = SafetyPolicy(
        classes={ActionClass.READ_ONLY: ClassPolicy.ALLOW, ActionClass.INPUT: ClassPolicy.DENY,
                 ActionClass.LAUNCH: ClassPolicy.ALLOW}
    )  # fmt: skip
    verdict = judge(Action(ActionType.TYPE_TEXT, text="hi", ui_element_id="e6"), policy=no_input)
    assert verdict.blocked_by == "P1" and verdict.actions == ()
    assert verdict.blocked == "P1: input actions are not allowed by policy"
    assert judge(Action(ActionType.WAIT, delay_ms=10), policy=no_input).runnable


@covers("R3")
def test_r3_open_app_outside_allowlist_blocks_the_plan() -> None:
    verdict = judge(Action(ActionType.OPEN_APP, target="xterm"))
    assert verdict.blocked_by == "R3" and not verdict.runnable
    assert "xterm is not in the allowlist" in verdict.blocked


def test_r3_the_allowlist_matches_app_names_without_case() -> None:
    verdict = judge(Action(ActionType.OPEN_APP, target=" FireFox "))
    assert verdict.blocked == "" and verdict.actions[0].target == " FireFox "


@covers("U1")
def test_row_u1_an_element_id_not_on_the_screen_blocks_the_plan() -> None:
    verdict = judge(Action(ActionType.CLICK_BY_BOUNDS, ui_element_id="e42"))
    assert verdict.blocked_by == "U1"
    assert verdict.blocked == "U1: element e42 is not on the screen"


@covers("S1")
def test_row_s1_typing_into_a_secured_field_blocks_the_plan() -> None:
    verdict = judge(Action(ActionType.TYPE_TEXT, text="hunter2", ui_element_id="e5"))
    assert verdict.blocked_by == "S1" and verdict.actions == ()
    assert judge(Action(ActionType.TYPE_TEXT, text="Ada", ui_element_id="e6")).runnable


@covers("R5")
@pytest.mark.parametrize(
    ("capture_area", "box"),
    [
        (Bounds(100, 50, 800, 600), Bounds(780, 590, 40, 20)),  # past the screenshot's own edge
        (Bounds(1500, 50, 800, 600), Bounds(500, 100, 40, 20)),  # in the screenshot, off the screen
        (Bounds(100, 50, 800, 600), Bounds(-5, 10, 40, 20)),
    ],
)
def test_r5_click_by_bounds_outside_the_screen_is_dropped(capture_area: Bounds, box: Bounds) -> None:
    verdict = judge(click_at(box), Action(ActionType.WAIT, delay_ms=100), context=screen(capture_area))
    assert [(d.index, d.row) for d in verdict.dropped] == [(0, "R5")]
    assert [a.type for a in verdict.actions] == [ActionType.WAIT]


def test_r5_click_by_bounds_inside_the_screen_is_kept() -> None:
    verdict = judge(click_at(SHARP.bounds))
    assert verdict.dropped == () and verdict.actions[0].bounds == SHARP.bounds


@covers("R5b")
def test_row_r5b_a_click_naming_neither_element_nor_bounds_is_dropped() -> None:
    verdict = judge(
        Action(ActionType.CLICK_BY_BOUNDS, target="somewhere"), Action(ActionType.WAIT, delay_ms=1)
    )
    assert [d.row for d in verdict.dropped] == ["R5b"]
    assert "names neither an element nor bounds" in verdict.dropped[0].reason
    assert len(verdict.actions) == 1


@covers("R4")
def test_r4_an_ambiguous_name_forces_confirmation_and_surfaces_its_candidates() -> None:
    verdict = judge(Action(ActionType.CLICK_BY_BOUNDS, ui_element_id="e3"))
    (kept,) = verdict.actions
    assert kept.require_confirmation and verdict.requires_confirmation
    assert kept.metadata["confirm_reason"] == "2 elements are named 'OK'"
    assert [(a.name, [c.id for c in a.candidates]) for a in verdict.ambiguities] == [("OK", ["e3", "e4"])]


def test_r4_a_unique_name_needs_no_confirmation() -> None:
    verdict = judge(Action(ActionType.CLICK_BY_BOUNDS, ui_element_id="e2"))
    assert not verdict.requires_confirmation and verdict.ambiguities == ()


def test_r4_only_actions_r4_looks_at_surface_ambiguities() -> None:
    twins = (
        *TREE,
        node("e7", "list item", "Firefox", Bounds(0, 0, 9, 9)),
        node("e8", "list item", "Firefox", Bounds(0, 9, 9, 9)),
    )
    context = replace(screen(), tree=twins)
    verdict = judge(Action(ActionType.OPEN_APP, target="Firefox"), context=context)
    assert "R4" not in verdict.rows_fired
    assert verdict.ambiguities == ()


@covers("C1")
@pytest.mark.parametrize("box", [BLURRY.bounds, Bounds(600, 500, 30, 20)], ids=["low-confidence", "no-text"])
def test_row_c1_low_ocr_confidence_under_a_click_needs_confirmation(box: Bounds) -> None:
    (kept,) = judge(click_at(box)).actions
    assert kept.require_confirmation
    assert "read with low confidence" in kept.metadata["confirm_reason"]


def test_row_c1_a_click_on_confidently_read_text_needs_no_confirmation() -> None:
    (kept,) = judge(click_at(SHARP.bounds)).actions
    assert not kept.require_confirmation


@covers("C2")
def test_row_c2_the_planner_asking_for_confirmation_is_kept_with_its_reason() -> None:
    asked = Action(
        ActionType.WAIT, delay_ms=5, require_confirmation=True, metadata={"ambiguity": "which tab?"}
    )
    (kept,) = judge(asked).actions
    assert kept.require_confirmation and kept.metadata["confirm_reason"] == "which tab?"
    assert judge(Action(ActionType.WAIT, delay_ms=5)).actions[0].require_confirmation is False


@covers("C3")
def test_row_c3_a_confirm_action_always_needs_confirmation() -> None:
    (kept,) = judge(Action(ActionType.CONFIRM, text="Delete the draft?")).actions
    assert kept.require_confirmation and kept.metadata["confirm_reason"] == "Delete the draft?"


@covers("P2")
def test_row_p2_a_class_on_confirm_by_policy_needs_confirmation() -> None:
    (kept,) = judge(Action(ActionType.OPEN_APP, target="firefox")).actions
    assert kept.metadata["confirm_reason"] == "launch actions need a confirmation by policy"
    launch_allowed = SafetyPolicy(
        allowed_apps=frozenset({"firefox"}),
        classes={ActionClass.READ_ONLY: ClassPolicy.ALLOW, ActionClass.INPUT: ClassPolicy.ALLOW,
                 ActionClass.LAUNCH: ClassPolicy.ALLOW},
    )  # fmt: skip
    assert not judge(
        Action(ActionType.OPEN_APP, target="firefox"), policy=launch_allowed
    ).requires_confirmation


def test_a_plan_whose_actions_are_all_dropped_is_blocked() -> None:
    verdict = judge(click_at(Bounds(5000, 5000, 10, 10)), Action(ActionType.CLICK_BY_BOUNDS))
    assert [d.row for d in verdict.dropped] == ["R5", "R5b"]
    assert verdict.blocked == "no action is left to run after the safety checks"
    assert verdict.blocked_by == "EMPTY" and not verdict.runnable


def test_a_block_stops_the_whole_plan_and_later_actions_are_not_read() -> None:
    verdict = judge(
        Action(ActionType.CLICK_BY_BOUNDS, ui_element_id="e2"),
        Action(ActionType.OPEN_APP, target="xterm"),
        Action(ActionType.CONFIRM, text="sure?"),
    )
    assert verdict.actions == () and verdict.blocked_by == "R3"
    assert "C3" not in verdict.rows_fired


def test_the_first_blocking_row_in_table_order_names_the_block() -> None:
    no_launch = SafetyPolicy(classes={ActionClass.LAUNCH: ClassPolicy.DENY})
    verdict = judge(Action(ActionType.OPEN_APP, target="xterm"), policy=no_launch)
    assert verdict.blocked_by == "P1" and verdict.rows_fired == ("P1",)


def test_a_drop_ends_that_actions_evaluation() -> None:
    verdict = judge(
        click_at(Bounds(5000, 0, 10, 10), require_confirmation=True), Action(ActionType.WAIT, delay_ms=1)
    )
    assert verdict.rows_fired == ("R5",) and not verdict.requires_confirmation


def test_confirm_reasons_accumulate_in_metadata_confirm_reason() -> None:
    unsure = Action(
        ActionType.CLICK_BY_BOUNDS, ui_element_id="e4", require_confirmation=True,
        metadata={"ambiguity": "the dialog's OK or the form's?"},
    )  # fmt: skip
    verdict = judge(unsure)
    assert verdict.rows_fired == ("R4", "C2")
    assert verdict.actions[0].metadata["confirm_reason"] == (
        "2 elements are named 'OK'; the dialog's OK or the form's?"
    )


def test_every_row_of_the_table_has_a_test() -> None:
    assert {row.id for row in ROWS} == _COVERED
