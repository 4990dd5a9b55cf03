"""Which element a person means (core/targets.py, core/labels.py, core/rules_planner.py; issue 31): what
a person would press before a label with the same words, a row selected by text or ordinal, a field by
its name, its label relation, the label beside it, its placeholder or as the one field, "the X menu" as
a menu. The trees are shaped as the real toolkits give them (GTK3, GTK4, Qt5), read off real apps."""

from __future__ import annotations

from kronii.vision.core.actions import Action, ActionType
from kronii.vision.core.context import Bounds, RawNode, ScreenContext, UiNode
from kronii.vision.core.rules_planner import plan_by_rules, resolve_now
from kronii.vision.core.safety import SafetyPolicy, evaluate
from kronii.vision.core.targets import Kind, kind_of, ordinal
from kronii.vision.core.tree import prune

SHOWING = frozenset({"showing", "visible", "sensitive", "enabled"})


def node(
    ref: str, role: str, name: str, depth: int, box: tuple[int, int, int, int], *, states: frozenset[str] = SHOWING,
    actions: tuple[str, ...] = (), editable: bool = False, parent: str | None = None, labelled_by: tuple[str, ...] = (),
    placeholder: str = "", text: str = "",
) -> RawNode:  # fmt: skip
    return RawNode(
        ref=f":1.5|/{ref}", role=role, name=name, states=states, bounds=Bounds(*box), actions=actions,
        editable=editable, text=text, depth=depth, parent=f":1.5|/{parent}" if parent else None,
        window_title="App", pid=5, labelled_by=labelled_by, placeholder=placeholder, secured=role == "password text",
    )  # fmt: skip


def screen(*nodes: RawNode) -> ScreenContext:
    window = node("w", "frame", "App", 0, (0, 0, 800, 600), states=SHOWING | {"active"})
    tree = prune([window, *nodes], max_nodes=300, max_depth=40)
    return ScreenContext(
        screenshot_id="", screenshot_hash="", screenshot_size=(0, 0), capture_area=Bounds(0, 0, 0, 0), ocr=(),
        tree=tree, focused_title="App", screen_bounds=Bounds(0, 0, 1920, 1080), scale=1.0, taken_at_ms=0,
    )  # fmt: skip


def one(intent: str, context: ScreenContext) -> tuple[Action, UiNode]:
    plan = plan_by_rules(intent, context)
    assert plan.note == "" and len(plan.actions) == 1, plan
    action = plan.actions[0]
    chosen = context.node(action.ui_element_id)
    assert chosen is not None, action
    return action, chosen


GTK4_SEVEN = (
    # gnome-calculator (GTK4): the button is named "7 7", the label inside it "7" offers clipboard.copy.
    node("b7", "button", "7 7", 5, (16, 300, 55, 40), states=frozenset({"visible", "sensitive"}), actions=("click",)),
    node("l7", "label", "7", 6, (16, 300, 55, 40), states=frozenset({"visible", "sensitive"}),
         actions=("clipboard.copy", "menu.popup")),
)  # fmt: skip


def test_click_the_7_button_on_a_gtk4_calculator_is_the_push_button_not_the_label_inside_it() -> None:
    action, chosen = one("click the 7 button", screen(*GTK4_SEVEN))
    assert chosen.role == "button" and action.target == "7"
    assert action.metadata["kind"] == "click" and "candidates" not in action.metadata


def test_a_button_and_the_label_inside_it_are_not_an_ambiguity_for_r4() -> None:
    context = screen(*GTK4_SEVEN)
    action, _ = one("click 7", context)
    assert "R4" not in evaluate((action,), context, SafetyPolicy()).rows_fired


def test_two_push_buttons_with_the_same_text_must_ask() -> None:
    context = screen(
        node("a", "push button", "OK", 1, (10, 10, 60, 30), actions=("click",)),
        node("b", "push button", "OK", 1, (300, 10, 60, 30), actions=("click",)),
    )
    action, _ = one("click OK", context)
    evaluation = evaluate((action,), context, SafetyPolicy())
    assert evaluation.requires_confirmation and [len(a.candidates) for a in evaluation.ambiguities] == [2]


TABLE = (
    node("t", "table", "", 1, (10, 40, 300, 120)),
    node("h", "table column header", "Fruit", 2, (10, 40, 100, 20), actions=("click",), parent="t"),
    *(
        node(f"c{i}", "table cell", name, 2, (10 + 100 * (i % 2), 62 + 23 * (i // 2), 100, 22),
             states=SHOWING | {"selectable"}, actions=("expand or contract", "edit", "activate"), parent="t")
        for i, name in enumerate(["Apple", "red", "Banana", "yellow", "Cherry", "red"])
    ),
)  # fmt: skip


def test_a_list_row_is_chosen_by_its_text_and_is_selected_not_activated() -> None:
    _, chosen = one("click Banana", screen(*TABLE))
    assert chosen.name == "Banana" and kind_of(chosen) is Kind.ROW


def test_select_the_second_row_and_the_last_row_by_ordinal() -> None:
    context = screen(*TABLE)
    assert one("select the second row", context)[1].name == "Banana"
    assert one("select the last row", context)[1].name == "Cherry"
    assert one("select row 1", context)[1].name == "Apple"
    assert plan_by_rules("select the fifth row", context).note == "the list has 3 rows, so there is no row 5"


def test_ordinals_are_read_as_a_person_writes_them() -> None:
    assert [ordinal(p) for p in ("the second row", "row 3", "the 4th item", "the last one", "Banana")] == [
        2, 3, 4, -1, None,
    ]  # fmt: skip


ZENITY_FORM = (
    # zenity --forms (GTK3): unnamed entries beside their labels, no label relation.
    node("e1", "text", "", 2, (467, 340, 168, 34), editable=True),
    node("l1", "label", "Name", 2, (396, 340, 39, 34)),
    node("p1", "password text", "", 2, (467, 380, 168, 34), editable=True),
    node("l2", "label", "Password", 2, (396, 380, 61, 34)),
)


def test_an_unnamed_field_is_found_by_the_label_beside_it() -> None:
    action, chosen = one("type Ada into Name", screen(*ZENITY_FORM))
    assert chosen.ref.endswith("/e1") and action.type is ActionType.TYPE_TEXT
    assert action.target == "Name"


def test_typing_into_the_password_beside_its_label_is_blocked() -> None:
    context = screen(*ZENITY_FORM)
    action, chosen = one("type hunter2 into Password", context)
    assert chosen.secured
    assert evaluate((action,), context, SafetyPolicy()).blocked_by == "S1"


def test_a_field_is_found_by_its_label_relation_and_by_its_placeholder() -> None:
    context = screen(
        node("e", "entry", "", 1, (100, 100, 200, 30), editable=True, labelled_by=("E-mail address",)),
        node("s", "entry", "", 1, (100, 200, 200, 30), editable=True, placeholder="Search…"),
    )
    assert one("type a@b.c into the E-mail address field", context)[1].ref.endswith("/e")
    assert one("type cats into Search", context)[1].ref.endswith("/s")


def test_the_text_field_is_the_one_field_and_two_fields_must_ask() -> None:
    editor = screen(node("doc", "text", "", 3, (0, 40, 800, 500), editable=True))
    assert one("type hello into the text field", editor)[1].ref.endswith("/doc")
    two = screen(*ZENITY_FORM[:2], node("e2", "text", "", 2, (467, 420, 168, 34), editable=True))
    action, _ = one("type hello into the text field", two)
    evaluation = evaluate((action,), two, SafetyPolicy())
    assert evaluation.requires_confirmation and "R4" in evaluation.rows_fired


QT_MENUS = (
    # featherpad (Qt5): a menu bar's items open menus with ShowMenu; a closed menu's items are not showing.
    node("mb", "menu bar", "", 1, (0, 0, 800, 22)),
    node("file", "menu item", "File", 2, (6, 0, 30, 22), actions=("ShowMenu",)),
    node("pm", "popup menu", "", 3, (0, 0, 0, 0), states=frozenset({"enabled"})),
    node(
        "saveas",
        "menu item",
        "Save As",
        4,
        (0, 25, 355, 25),
        states=frozenset({"enabled"}),
        actions=("Press",),
    ),
)


def test_open_the_file_menu_is_the_windows_menu_not_an_app() -> None:
    action, chosen = one("open the File menu", screen(*QT_MENUS))
    assert action.type is ActionType.CLICK_BY_BOUNDS and action.metadata["kind"] == "menu"
    assert kind_of(chosen) is Kind.MENU


def test_a_menu_item_not_yet_shown_is_found_when_its_step_comes() -> None:
    context = screen(*QT_MENUS)
    plan = plan_by_rules("open the File menu then click Save As", context)
    _, later = plan.actions
    assert later.ui_element_id == "" and later.metadata == {"kind": "click", "resolve": "Save As"}
    shown = {"showing", "visible", "enabled", "sensitive"}
    after = screen(
        *QT_MENUS[:3],
        node(
            "saveas", "menu item", "Save As", 4, (6, 47, 355, 25), states=frozenset(shown), actions=("Press",)
        ),
    )
    found = resolve_now(later, after)
    assert not isinstance(found, str)
    element = after.node(found.ui_element_id)
    assert element is not None and element.name == "Save As"
    assert (
        resolve_now(later, context)
        == "nothing named 'Save As' is in the window in front (looked for when its step came)"
    )


def test_a_name_that_is_nowhere_blocks_without_a_later_step() -> None:
    assert (
        plan_by_rules("click Frobnicate", screen(*QT_MENUS)).note
        == "nothing named 'Frobnicate' is in the window in front"
    )


def test_check_and_uncheck_name_a_check_box_and_say_the_state_wanted() -> None:
    context = screen(node("cb", "check box", "Remember me", 1, (10, 10, 120, 20), actions=("toggle",)))
    action, chosen = one("check Remember me", context)
    assert chosen.role == "check box"
    assert action.metadata == {"kind": "toggle", "want": "checked"}
    assert one("uncheck Remember me", context)[0].metadata["want"] == "unchecked"


def test_toolkit_class_names_are_no_names_and_a_gtk4_button_is_called_by_its_label() -> None:
    context = screen(
        node(
            "pi",
            "button",
            "GtkButton",
            5,
            (284, 252, 55, 40),
            states=frozenset({"visible"}),
            actions=("click",),
        ),
        node("pil", "label", "π", 6, (284, 252, 55, 40), states=frozenset({"visible"})),
    )
    action, chosen = one("click π", context)
    assert chosen.role == "button" and action.target == "π"
    assert plan_by_rules("click GtkButton", context).actions == ()


GTK4_HEADER = (
    # gnome-text-editor (GTK4): a menu button is an outer button with no action around an inner one.
    node("mo", "button", "Menu", 5, (536, 6, 34, 34), states=frozenset({"visible"})),
    node("mi", "button", "Menu", 6, (541, 11, 24, 24), states=frozenset({"visible"}), actions=("click",)),
    node("retry", "button", "_Retry Retry", 5, (10, 60, 80, 30), states=frozenset({"visible"}), actions=("click",)),
    node("doc", "text box", "EditorSourceView", 8, (0, 100, 700, 400), states=frozenset({"visible"}), editable=True),
)  # fmt: skip


def test_open_the_main_menu_is_the_one_menu_button_and_its_wrapper_is_not_a_second_one() -> None:
    context = screen(*GTK4_HEADER)
    action, chosen = one("open the main menu", context)
    assert chosen.ref.endswith("/mi") and action.metadata["kind"] == "menu"
    assert one("open the menu", context)[1].ref.endswith("/mi")
    click, _ = one("click Menu", context)
    assert "R4" not in evaluate((click,), context, SafetyPolicy()).rows_fired


def test_mnemonics_doubled_names_and_application_class_names_are_read_as_a_person_would() -> None:
    context = screen(*GTK4_HEADER)
    assert one("click Retry", context)[1].ref.endswith("/retry")
    assert one("type hi into the text field", context)[1].ref.endswith("/doc")
    assert plan_by_rules("type hi into EditorSourceView", context).actions == ()


def test_open_the_x_menu_on_a_gtk4_menu_button_that_does_not_say_it_opens_one() -> None:
    context = screen(
        # gnome-calculator (GTK4): the mode switcher is a button called "Basic" inside a GtkMenuButton.
        node("mb", "button", "GtkMenuButton", 4, (105, 6, 78, 34), states=frozenset({"visible"})),
        node(
            "basic",
            "button",
            "Basic",
            5,
            (114, 11, 60, 24),
            states=frozenset({"visible"}),
            actions=("click",),
        ),
    )
    action, chosen = one("open the Basic menu", context)
    assert chosen.ref.endswith("/basic") and action.metadata["kind"] == "menu"  # and a menu must open


def test_a_lists_check_column_is_called_by_its_rows_text() -> None:
    context = screen(
        # zenity --list --checklist (GTK3): an unnamed toggle cell, then the row's text cell.
        node("t", "table", "", 1, (376, 342, 274, 113)),
        node("c1", "table cell", "", 2, (378, 368, 40, 21), actions=("toggle", "edit"), parent="t"),
        node("c2", "table cell", "Apple", 2, (423, 368, 225, 21), actions=("activate",), parent="t"),
        node("c3", "table cell", "", 2, (378, 391, 40, 21), actions=("toggle", "edit"), parent="t"),
        node("c4", "table cell", "Banana", 2, (423, 391, 225, 21), actions=("activate",), parent="t"),
    )
    action, chosen = one("check Banana", context)
    assert (
        chosen.ref.endswith("/c3") and kind_of(chosen) is Kind.TOGGLE and action.metadata["want"] == "checked"
    )
    assert one("select Banana", context)[1].ref.endswith(
        "/c4"
    )  # the row itself is still selected by its text
