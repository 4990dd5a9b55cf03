"""Pruning the accessibility tree (core/tree.py, seed 001 "UI tree pruning"): the window in front, its
focused and labelled elements, at most max_nodes, no deeper than max_depth, ids e1.. in reading order."""

from __future__ import annotations

from kronii.vision.core.context import Bounds, RawNode
from kronii.vision.core.tree import front_window, prune


def raw(
    ref: str,
    role: str,
    name: str,
    depth: int,
    *,
    states: frozenset[str] = frozenset(),
    text: str = "",
    secured: bool = False,
    window: str = "Editor",
    pid: int = 10,
    box: Bounds | None = None,
) -> RawNode:
    return RawNode(
        ref=f"app{pid}|/{ref}", role=role, name=name, states=states,
        bounds=box if box is not None else Bounds(depth * 10, len(ref) * 10, 50, 20),
        actions=("click",) if role == "push button" else (), editable=role in {"entry", "password text"},
        text=text, depth=depth, parent=None, secured=secured, window_title=window, pid=pid,
    )  # fmt: skip


def editor(*children: RawNode) -> list[RawNode]:
    return [raw("w", "frame", "Editor", 0), *children]


def names(nodes: list[RawNode], **limits: int) -> list[str]:
    return [node.name for node in prune(nodes, **limits)]


def test_the_window_holding_the_focused_element_is_the_front_one() -> None:
    nodes = [
        raw("w", "frame", "Mail", 0, pid=1, window="Mail"),
        raw("b", "push button", "Send", 1, pid=1, window="Mail", states=frozenset({"focused"})),
        raw("w", "frame", "Terminal", 0, pid=2, window="Terminal", states=frozenset({"active"})),
        raw("c", "push button", "Close", 1, pid=2, window="Terminal"),
    ]
    chosen = front_window(nodes)
    assert chosen is not None and chosen.name == "Mail"
    assert names(nodes) == ["Mail", "Send"]


def test_without_focus_the_active_window_then_the_last_one_is_in_front() -> None:
    mail = raw("w", "frame", "Mail", 0, pid=1, window="Mail", states=frozenset({"active"}))
    terminal = raw("w", "frame", "Terminal", 0, pid=2, window="Terminal")
    assert front_window([mail, terminal]) is mail
    assert front_window([raw("w", "frame", "Mail", 0, pid=1), terminal]) is terminal
    assert front_window([raw("p", "panel", "", 0)]) is None
    assert prune([raw("p", "panel", "", 0)]) == ()


def test_a_focused_element_owned_by_a_same_named_window_of_another_process_is_not_its() -> None:
    nodes = [
        raw("w", "frame", "Notes", 0, pid=1, window="Notes", states=frozenset({"active"})),
        raw("w", "frame", "Notes", 0, pid=2, window="Notes"),
        raw("e", "entry", "Body", 1, pid=2, window="Notes", states=frozenset({"focused"})),
    ]
    chosen = front_window(nodes)
    assert chosen is not None and chosen.pid == 2


def test_at_most_max_nodes_are_kept_and_the_focused_one_always_is() -> None:
    buttons = [raw(f"b{i}", "push button", f"Button {i}", 1) for i in range(30)]
    focused = raw("f", "entry", "Search", 1, states=frozenset({"focused"}))
    pruned = prune(editor(*buttons, focused), max_nodes=20)
    assert len(pruned) == 20
    assert pruned[0].name == "Editor" and pruned[-1].name == "Search"
    assert [n.name for n in pruned[1:-1]] == [f"Button {i}" for i in range(18)]


def test_elements_deeper_than_max_depth_below_the_window_are_left_out() -> None:
    nodes = editor(
        raw("p", "panel", "Body", 1),
        raw("a", "push button", "Near", 2),
        raw("b", "push button", "Deep", 3),
    )
    assert names(nodes, max_depth=2) == ["Editor", "Body", "Near"]
    assert names(nodes, max_depth=3) == ["Editor", "Body", "Near", "Deep"]


def test_unnamed_containers_are_left_out_but_their_named_children_stay() -> None:
    nodes = editor(
        raw("p", "panel", "", 1),
        raw("f", "filler", "", 2),
        raw("b", "push button", "Save", 3),
        raw("u", "push button", "", 2),
    )
    assert names(nodes) == ["Editor", "Save"]


def test_two_buttons_with_the_same_name_are_both_kept_for_r4() -> None:
    nodes = editor(
        raw("a", "push button", "OK", 1, box=Bounds(10, 10, 60, 30)),
        raw("b", "push button", "OK", 2, box=Bounds(300, 10, 60, 30)),
    )
    pruned = prune(nodes)
    assert [(n.name, n.bounds) for n in pruned[1:]] == [
        ("OK", Bounds(10, 10, 60, 30)),
        ("OK", Bounds(300, 10, 60, 30)),
    ]


def test_the_same_role_name_and_bounds_count_once() -> None:
    same = Bounds(10, 10, 60, 30)
    nodes = editor(raw("a", "push button", "OK", 1, box=same), raw("b", "push button", "OK", 2, box=same))
    assert names(nodes) == ["Editor", "OK"]


def test_a_secured_field_stays_but_its_text_is_never_kept() -> None:
    # An adapter that failed to leave the text out must not get it into a plan.
    nodes = editor(raw("p", "password text", "Password", 1, text="hunter2", secured=True))
    (_, field) = prune(nodes)
    assert field.secured and field.role == "password text"
    assert field.text == ""
    assert "hunter2" not in repr(field.as_prompt()) and field.as_prompt()["secured"] is True


def test_ids_run_e1_upwards_in_reading_order_with_depth_relative_to_the_window() -> None:
    nodes = [
        raw("x", "frame", "Other", 0, pid=3, window="Other"),
        raw("w", "frame", "Editor", 0, states=frozenset({"active"})),
        raw("n", "entry", "Name", 1),
        raw("s", "push button", "Save", 2, states=frozenset({"focused"})),
        raw("c", "push button", "Cancel", 2),
    ]
    pruned = prune(nodes)
    assert [(n.id, n.name, n.depth) for n in pruned] == [
        ("e1", "Editor", 0),
        ("e2", "Name", 1),
        ("e3", "Save", 2),
        ("e4", "Cancel", 2),
    ]
    assert pruned[1].ref == "app10|/n"


def test_the_next_window_at_the_same_depth_ends_the_front_window() -> None:
    nodes = [
        raw("w", "frame", "Editor", 0, states=frozenset({"active"})),
        raw("s", "push button", "Save", 1),
        raw("x", "frame", "Other", 0, pid=3, window="Other"),
        raw("q", "push button", "Quit", 1, pid=3, window="Other"),
    ]
    assert names(nodes) == ["Editor", "Save"]
