"""Placing the accessibility tree on a Wayland layout (core.layout) and reading sway's tree as the
engine's windows (adapters.wl_desktop.desk_from_tree): pure, in process, on the shapes sway and GTK give
(the real programs' side is in test_vision_wayland_tree.py)."""

from __future__ import annotations

from typing import Any

from kronii.vision.adapters.wl_desktop import desk_from_tree
from kronii.vision.core.context import Bounds, RawNode
from kronii.vision.core.front import XDesk, XWindow
from kronii.vision.core.layout import place_on_layout


def _node(ref: str, role: str, name: str, depth: int, pid: int, bounds: Bounds | None) -> RawNode:
    return RawNode(
        ref=ref, role=role, name=name, states=frozenset(), bounds=bounds, actions=(), editable=False, text="",
        depth=depth, parent=None, window_title=name, pid=pid,
    )  # fmt: skip


def _window(window_id: int, pid: int, title: str, area: Bounds) -> XWindow:
    return XWindow(window_id=window_id, pid=pid, title=title, wm_class="app", area=area)


def test_each_windows_objects_move_by_where_sway_put_that_window() -> None:
    nodes = (
        _node("a", "application", "calc", 0, 10, None),
        _node("w1", "frame", "Calculator", 1, 10, Bounds(0, 0, 300, 400)),
        _node("b1", "push button", "7", 2, 10, Bounds(6, 184, 63, 34)),
        _node("w2", "dialog", "Preferences", 1, 10, Bounds(0, 0, 200, 100)),
        _node("b2", "push button", "Close", 2, 10, Bounds(150, 70, 40, 20)),
        _node("e", "application", "editor", 0, 20, None),
        _node("w3", "frame", "Notes", 1, 20, Bounds(0, 0, 640, 800)),
        _node("t", "text", "", 2, 20, Bounds(10, 40, 600, 700)),
    )
    desk = XDesk(
        3, 3,
        (
            _window(1, 10, "Calculator", Bounds(100, 120, 300, 400)),
            _window(2, 10, "Preferences", Bounds(500, 300, 200, 100)),
            _window(3, 20, "Notes", Bounds(640, 0, 640, 800)),
        ),
    )  # fmt: skip
    placed = {node.ref: node.bounds for node in place_on_layout(nodes, desk)}
    assert placed["b1"] == Bounds(106, 304, 63, 34)
    assert placed["b2"] == Bounds(650, 370, 40, 20)  # the same process's second window, found by title
    assert placed["t"] == Bounds(650, 40, 600, 700)
    assert placed["w3"] == Bounds(640, 0, 640, 800)


def test_a_window_sway_does_not_list_leaves_its_objects_without_a_place() -> None:
    nodes = (
        _node("a", "application", "gone", 0, 30, None),
        _node("w", "frame", "Gone", 1, 30, Bounds(0, 0, 300, 200)),
        _node("b", "push button", "OK", 2, 30, Bounds(10, 10, 50, 20)),
    )
    desk = XDesk(1, 1, (_window(1, 10, "Calculator", Bounds(100, 120, 300, 400)),))
    assert [node.bounds for node in place_on_layout(nodes, desk)] == [None, None, None]


def _view(node_id: int, pid: int, **extra: Any) -> dict[str, Any]:
    view = {
        "id": node_id, "type": "con", "pid": pid, "name": f"window {node_id}", "app_id": "app",
        "rect": {"x": 0, "y": 0, "width": 640, "height": 800}, "nodes": [], "floating_nodes": [],
        "window_rect": {"x": 0, "y": 0, "width": 640, "height": 800},
        "geometry": {"x": 0, "y": 0, "width": 640, "height": 800}, "visible": True, "focused": False,
    }  # fmt: skip
    view.update(extra)
    return view


def test_sways_tree_gives_the_visible_windows_tiled_first_and_the_focused_one() -> None:
    floating = _view(
        7, 70, rect={"x": 300, "y": 160, "width": 351, "height": 364},
        window_rect={"x": 0, "y": 20, "width": 351, "height": 344},
        geometry={"x": 12, "y": 8, "width": 351, "height": 344}, focused=True,
    )  # fmt: skip
    hidden = _view(9, 90, visible=False)
    workspace = {"type": "workspace", "nodes": [_view(5, 50), hidden], "floating_nodes": [floating]}
    tree = {"type": "root", "nodes": [{"type": "output", "nodes": [workspace]}], "floating_nodes": []}
    desk = desk_from_tree(tree)
    assert [w.window_id for w in desk.stack] == [5, 7]
    assert desk.focus == 7 and desk.active == 7
    # Below the title bar (window_rect) and less the client's shadow offset (geometry).
    assert desk.window(7) == _window(7, 70, "window 7", Bounds(288, 172, 351, 344))
