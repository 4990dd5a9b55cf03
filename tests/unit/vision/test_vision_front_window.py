"""The window in front (core/front.py): the X server's focus window, matched to its process's window in
the accessibility tree and checked against it; the guard before input; what the diff masks."""

from __future__ import annotations

from kronii.vision.core.context import Bounds, RawNode, WindowFacts
from kronii.vision.core.front import XDesk, XWindow, choose_front, covering, front_window, window_guard
from kronii.vision.core.tree import prune

EDITOR_AREA = Bounds(100, 100, 700, 500)
DIALOG_AREA = Bounds(300, 300, 200, 120)


def raw(
    ref: str, role: str, name: str, depth: int, *, pid: int, window: str, states: frozenset[str] = frozenset(),
    box: Bounds | None = None,
) -> RawNode:  # fmt: skip
    return RawNode(
        ref=f"app{pid}|/{ref}", role=role, name=name, states=states, bounds=box or Bounds(0, 0, 50, 20),
        actions=("click",) if role == "push button" else (), editable=role in {"entry", "text"}, text="",
        depth=depth, parent=None, window_title=window, pid=pid,
    )  # fmt: skip


def xwin(window_id: int, pid: int, title: str, area: Bounds, **facts: object) -> XWindow:
    return XWindow(window_id, pid, title, str(facts.pop("wm_class", title.lower())), area, **facts)  # type: ignore[arg-type]


# A Qt editor (pid 10) behind a GTK dialog (pid 20): Qt keeps `focused` on its search box even so.
EDITOR_BEHIND = [
    raw("w", "frame", "Untitled", 1, pid=10, window="Untitled", box=EDITOR_AREA),
    raw("s", "text", "Search", 2, pid=10, window="Untitled", states=frozenset({"focused"})),
    raw(
        "d", "dialog", "Question", 1, pid=20, window="Question", states=frozenset({"active"}), box=DIALOG_AREA
    ),
    raw("e", "text", "", 2, pid=20, window="Question", states=frozenset({"focused"})),
    raw("ok", "push button", "OK", 2, pid=20, window="Question"),
]
EDITOR_X = xwin(0x200006, 10, "Untitled", EDITOR_AREA, wm_class="FeatherPad", toolkit="qt")
DIALOG_X = xwin(0xA00003, 20, "Question", DIALOG_AREA, wm_class="Zenity", toolkit="gtk")


def desk(focus: int, *stack: XWindow, active: int | None = None) -> XDesk:
    return XDesk(focus, focus if active is None else active, tuple(stack))


def test_the_x_focus_window_is_in_front_even_when_qt_keeps_focus_on_a_window_behind() -> None:
    assert front_window(EDITOR_BEHIND) is not None and front_window(EDITOR_BEHIND).name == "Untitled"  # type: ignore[union-attr]
    choice = choose_front(EDITOR_BEHIND, desk(DIALOG_X.window_id, EDITOR_X, DIALOG_X))
    assert choice.node is not None and choice.node.name == "Question"
    assert choice.x == DIALOG_X and choice.problem == ""


def test_the_tree_a_plan_sees_is_the_front_windows_only() -> None:
    choice = choose_front(EDITOR_BEHIND, desk(DIALOG_X.window_id, EDITOR_X, DIALOG_X))
    assert choice.node is not None
    start = EDITOR_BEHIND.index(choice.node)
    names = [node.name for node in prune(EDITOR_BEHIND[start:])]
    assert "Search" not in names and names[0] == "Question"


def test_a_front_window_whose_process_has_no_tree_blocks_with_what_it_needs() -> None:
    nodes = EDITOR_BEHIND[2:]  # only the dialog is on the bus
    choice = choose_front(nodes, desk(EDITOR_X.window_id, DIALOG_X, EDITOR_X))
    assert choice.node is None
    assert "the window in front is 'Untitled' (FeatherPad, pid 10)" in choice.problem
    assert "not on the bus" in choice.problem and "QT_ACCESSIBILITY=1" in choice.problem
    assert choice.problem in choice.notes


def test_the_hint_names_what_a_chromium_window_needs_and_any_other_program_gets_a_sentence() -> None:
    browser = xwin(0x300001, 30, "New Tab", EDITOR_AREA, wm_class="Chromium", toolkit="chromium")
    odd = xwin(0x300002, 31, "Plot", EDITOR_AREA, wm_class="Gnuplot")
    assert (
        "--force-renderer-accessibility"
        in choose_front(EDITOR_BEHIND, desk(browser.window_id, browser)).problem
    )
    problem = choose_front(EDITOR_BEHIND, desk(odd.window_id, odd)).problem
    assert "'Plot' (Gnuplot, pid 31)" in problem and "AT-SPI" in problem


def test_the_tree_naming_another_applications_window_active_blocks_with_both_names() -> None:
    nodes = [
        raw("w", "frame", "Untitled", 1, pid=10, window="Untitled", states=frozenset({"active"})),
        raw("d", "dialog", "Question", 1, pid=20, window="Question"),
    ]
    choice = choose_front(nodes, desk(DIALOG_X.window_id, EDITOR_X, DIALOG_X))
    assert choice.node is not None and choice.node.name == "Question"
    assert "the accessibility tree says 'Untitled' (FeatherPad) is active" in choice.problem
    assert "focus is in 'Question' (Zenity, pid 20)" in choice.problem


def test_among_a_processs_windows_the_one_matching_the_x_window_title_and_bounds_is_chosen() -> None:
    nodes = [
        raw("a", "frame", "Main", 1, pid=10, window="Main", box=EDITOR_AREA, states=frozenset({"active"})),
        raw("a1", "push button", "Save", 2, pid=10, window="Main"),
        raw("b", "dialog", "Find", 1, pid=10, window="Find", box=DIALOG_AREA),
        raw("b1", "text", "Look for", 2, pid=10, window="Find"),
    ]
    find = xwin(0x200010, 10, "Find", DIALOG_AREA)
    choice = choose_front(nodes, desk(find.window_id, EDITOR_X, find))
    assert choice.node is not None and choice.node.name == "Find" and choice.problem == ""


def test_without_x_facts_the_trees_own_guess_stands() -> None:
    choice = choose_front(EDITOR_BEHIND, None)
    assert choice.node is not None and choice.node.name == "Untitled" and choice.x is None
    assert choice.problem == "" and choice.notes == ()


def test_no_focus_window_falls_back_to_the_active_one_and_says_so() -> None:
    choice = choose_front(EDITOR_BEHIND, desk(0, EDITOR_X, DIALOG_X, active=DIALOG_X.window_id))
    assert choice.node is not None and choice.node.name == "Question"
    assert any("names no focus window" in note for note in choice.notes)


def test_a_notification_bubble_and_other_processes_popups_over_the_window_are_masked() -> None:
    bubble = xwin(0x500001, 40, "", Bounds(600, 80, 300, 100), notification=True)
    popup = xwin(0x500002, 41, "", Bounds(150, 150, 50, 50), override_redirect=True)
    own_menu = xwin(0x500003, 10, "", Bounds(120, 120, 80, 200), override_redirect=True)
    kronii = xwin(0x500004, 50, "kronii", Bounds(0, 0, 150, 150), kronii=True)
    other_app = xwin(0x500005, 60, "Mail", Bounds(700, 500, 300, 300))
    view = desk(EDITOR_X.window_id, EDITOR_X, bubble, popup, own_menu, kronii, other_app)
    assert covering(view, EDITOR_X.window_id) == (
        Bounds(600, 100, 200, 80),  # the bubble, clipped to the window
        Bounds(150, 150, 50, 50),
        Bounds(100, 100, 50, 50),
    )


def test_a_bubble_below_the_window_masks_nothing() -> None:
    bubble = xwin(0x500001, 40, "", Bounds(600, 80, 300, 100), notification=True)
    assert covering(desk(EDITOR_X.window_id, bubble, EDITOR_X), EDITOR_X.window_id) == ()


def test_input_goes_to_the_approved_window_or_nowhere() -> None:
    approved = WindowFacts(DIALOG_X.window_id, 20, "Question", "Zenity", DIALOG_AREA)
    assert window_guard(approved, desk(DIALOG_X.window_id, EDITOR_X, DIALOG_X)) == ""
    refused = window_guard(approved, desk(EDITOR_X.window_id, DIALOG_X, EDITOR_X))
    assert refused == (
        "the window in front is now 'Untitled' (FeatherPad), not 'Question' (Zenity) the plan was approved "
        "for: nothing was typed or clicked"
    )
    assert "nothing was typed" in window_guard(approved, None)
    assert window_guard(None, None) == ""


def test_a_dialog_of_the_approved_window_may_take_input_and_another_programs_may_not() -> None:
    approved = WindowFacts(EDITOR_X.window_id, 10, "Untitled", "FeatherPad", EDITOR_AREA)
    save_as = xwin(0x200020, 10, "Save as", DIALOG_AREA, transient_for=EDITOR_X.window_id)
    stranger = xwin(0x900001, 90, "Save as", DIALOG_AREA, transient_for=EDITOR_X.window_id)
    assert window_guard(approved, desk(save_as.window_id, EDITOR_X, save_as)) == ""
    assert "nothing was typed" in window_guard(approved, desk(stranger.window_id, EDITOR_X, stranger))


def test_a_front_window_on_the_bus_with_nothing_under_it_blocks_with_what_it_needs() -> None:
    browser = xwin(0x300001, 30, "Page - Chromium", EDITOR_AREA, wm_class="Chromium", toolkit="chromium")
    nodes = [*EDITOR_BEHIND[:2], raw("c", "frame", "Page - Chromium", 1, pid=30, window="Page - Chromium")]
    choice = choose_front(nodes, desk(browser.window_id, EDITOR_X, browser))
    assert choice.node is not None and choice.node.pid == 30
    assert choice.problem == (
        "the window in front is 'Page - Chromium' (Chromium, pid 30), but its accessibility tree is empty: "
        "Chromium and Electron programs need --force-renderer-accessibility"
    )
