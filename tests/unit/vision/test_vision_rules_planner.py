"""The rules planner (core/rules_planner.py): the simple intents planned without a model, against one
screen whose tree has a Save button, two OK buttons, a Name entry (focused) and a Search field."""

from __future__ import annotations

import pytest
from kronii.vision.core.actions import MAX_WAIT_MS, Action, ActionType
from kronii.vision.core.context import Bounds, OcrZone, ScreenContext, UiNode
from kronii.vision.core.rules_planner import SUPPORTED, plan_by_rules
from kronii.vision.core.safety import SafetyPolicy, evaluate


def node(node_id: str, role: str, name: str, *, depth: int = 1, focused: bool = False) -> UiNode:
    return UiNode(
        id=node_id, ref=f"app|/{node_id}", role=role, name=name,
        states=frozenset({"focused"}) if focused else frozenset(), bounds=Bounds(10, 10, 50, 20),
        actions=(), editable=role in {"entry", "text"}, text="", depth=depth,
    )  # fmt: skip


TREE = (
    node("e1", "frame", "Editor", depth=0),
    node("e2", "push button", "Save"),
    node("e3", "push button", "OK"),
    node("e4", "push button", "OK", depth=2),
    node("e5", "entry", "Name", focused=True),
    node("e6", "text", "Search"),
    node("e7", "label", "Search"),
)
ZONES = (
    OcrZone("Submit", 0.55, Bounds(5, 5, 40, 10)),
    OcrZone("Submit order", 0.92, Bounds(300, 400, 90, 18)),
)


def screen(tree: tuple[UiNode, ...] = TREE) -> ScreenContext:
    return ScreenContext(
        screenshot_id="s1", screenshot_hash="cd" * 32, screenshot_size=(800, 600),
        capture_area=Bounds(0, 0, 800, 600), ocr=ZONES, tree=tree, focused_title="Editor",
        screen_bounds=Bounds(0, 0, 1920, 1080), scale=1.0, taken_at_ms=0,
    )  # fmt: skip


def only(intent: str, context: ScreenContext | None = None) -> Action:
    plan = plan_by_rules(intent, context or screen())
    assert plan.note == "" and len(plan.actions) == 1, plan
    return plan.actions[0]


@pytest.mark.parametrize(
    ("intent", "app"),
    [("open Firefox", "Firefox"), ("launch the Calculator app", "Calculator"), ('start "gedit".', "gedit")],
)
def test_open_names_the_app_to_launch(intent: str, app: str) -> None:
    action = only(intent)
    assert action.type is ActionType.OPEN_APP and action.target == app


def test_click_names_the_button_by_its_accessible_name() -> None:
    action = only("click the Save button")
    assert action.type is ActionType.CLICK_BY_BOUNDS
    assert (action.ui_element_id, action.target, action.require_confirmation) == ("e2", "Save", False)


def test_type_into_a_named_field_prefers_the_field_over_a_label_of_the_same_name() -> None:
    action = only('type "kronii docs" into the Search field')
    assert action.type is ActionType.TYPE_TEXT
    assert (action.text, action.ui_element_id, action.require_confirmation) == ("kronii docs", "e6", False)


def test_type_without_a_field_goes_to_the_focused_editable_element() -> None:
    action = only("type Ada Lovelace")
    assert (action.text, action.ui_element_id, action.target) == ("Ada Lovelace", "e5", "Name")


def test_type_without_a_focused_field_names_no_element() -> None:
    unfocused = tuple(n for n in TREE if n.id != "e5")
    action = only("type hello", screen(unfocused))
    assert action.type is ActionType.TYPE_TEXT and action.ui_element_id == "" and action.text == "hello"


@pytest.mark.parametrize(
    ("intent", "millis"),
    [("wait 2 s", 2_000), ("wait 250 ms", 250), ("wait 1.5 seconds", 1_500), ("wait 60 s", MAX_WAIT_MS)],
)
def test_wait_is_in_milliseconds_and_capped(intent: str, millis: int) -> None:
    action = only(intent)
    assert action.type is ActionType.WAIT and action.delay_ms == millis


def test_r4_an_ambiguous_click_proposes_the_first_match_and_leaves_the_flag_to_the_safety_layer() -> None:
    action = only("click OK")
    assert action.ui_element_id == "e3" and not action.require_confirmation
    assert action.metadata == {"kind": "click", "candidates": "e3,e4"}
    evaluation = evaluate((action,), screen(), SafetyPolicy())
    assert evaluation.requires_confirmation and "R4" in evaluation.rows_fired
    (ambiguity,) = evaluation.ambiguities
    assert [n.id for n in ambiguity.candidates] == ["e3", "e4"]


def test_a_click_on_text_only_ocr_read_falls_back_to_its_best_read_bounds() -> None:
    action = only("click Submit")
    assert action.type is ActionType.CLICK_BY_BOUNDS and action.ui_element_id == ""
    assert action.bounds == Bounds(300, 400, 90, 18)  # the 0.92 zone, not the 0.55 one
    assert action.target == "Submit"


def test_a_click_on_nothing_on_the_screen_is_a_note_not_an_action() -> None:
    plan = plan_by_rules("click the Frobnicate button", screen())
    assert plan.actions == () and plan.note == "nothing named 'Frobnicate' is in the window in front"


def test_typing_into_a_field_not_on_the_screen_is_a_note() -> None:
    plan = plan_by_rules("type hi into the Address field", screen())
    assert plan.actions == () and plan.note == "no field named 'Address' is in the window in front"


def test_an_unsupported_intent_is_a_note_naming_what_is_supported() -> None:
    plan = plan_by_rules("book me a flight to Lisbon", screen())
    assert plan.actions == ()
    assert plan.note == f"without a model, kronii plans only: {SUPPORTED}"
    assert all(word in plan.note for word in ("open APP", "click", "type TEXT into FIELD", "wait"))


def test_quoted_text_holding_the_word_in_is_typed_whole() -> None:
    action = only('type "made in Lisbon" into the Search field')
    assert (action.text, action.ui_element_id) == ("made in Lisbon", "e6")
