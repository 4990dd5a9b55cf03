"""Pruning the accessibility tree for a plan (seed 001, "UI tree pruning"): the top-level window in
front, the focused element and the labelled elements a plan can name, at most `max_nodes`, no deeper
than `max_depth`. Secured fields stay in (a plan may need to know a password field is there) but
never with their text: the adapter did not read it, and `UiNode.as_prompt` would not show it."""

from __future__ import annotations

from collections.abc import Sequence

from kronii.vision.core.context import RawNode, UiNode
from kronii.vision.core.front import WINDOW_ROLES, front_window
from kronii.vision.core.labels import field_labels, inner_texts, toggle_labels
from kronii.vision.core.targets import useful_name

__all__ = ["INTERACTIVE_ROLES", "WINDOW_ROLES", "front_window", "prune"]

INTERACTIVE_ROLES = frozenset(
    {
        "push button", "toggle button", "check box", "radio button", "menu item", "check menu item",
        "radio menu item", "link", "combo box", "text", "entry", "password text", "spin button",
        "page tab", "list item", "table cell", "tree item", "slider", "menu", "icon",
    }
)  # fmt: skip


def _interactive(node: RawNode) -> bool:
    return node.role in INTERACTIVE_ROLES or bool(node.actions) or node.editable


def _in_window(nodes: Sequence[RawNode], window: RawNode) -> list[RawNode]:
    """`window` and its descendants, in reading order (the adapter walks depth first)."""
    start = nodes.index(window)
    inside = [window]
    for node in nodes[start + 1 :]:
        if node.depth <= window.depth:
            break
        inside.append(node)
    return inside


def _priority(node: RawNode) -> int:
    if "focused" in node.states:
        return 0
    if _interactive(node) and (node.name or node.secured or node.editable):
        return 1
    return 2


def _on_screen(node: RawNode, reports_showing: bool) -> bool:
    """Whether a person can see `node` now: a closed menu's items and a hidden page's widgets are in
    the tree too. GTK4 reports no `showing` state at all; there the bounds decide alone."""
    box = node.bounds
    if box is None or box.empty or box.x <= _OFF_SCREEN or box.y <= _OFF_SCREEN:
        return False
    return "showing" in node.states or not reports_showing


_OFF_SCREEN = -(2**30)


def _kept(node: RawNode, inner: dict[str, tuple[str, ...]]) -> bool:
    """Whether a plan can name `node`: by its name, the label inside it, or as a field."""
    named = bool(useful_name(node.name)) or (_interactive(node) and node.ref in inner)
    toggles = any(a.lower() in ("toggle", "check", "uncheck") for a in node.actions)
    return named or toggles or node.editable or node.secured or "focused" in node.states


def prune(nodes: Sequence[RawNode], *, max_nodes: int = 20, max_depth: int = 12) -> tuple[UiNode, ...]:
    """The elements of the window in front a person can see, ids "e1".."eN" in reading order, at most
    `max_nodes` (the focused and the interactive ones first). Unnamed containers are left out; two
    nodes with the same role, name and bounds count once; duplicates by name alone stay, so an
    ambiguous name is visible to the safety layer (R4). Fields carry the label a person calls them by."""
    window = front_window(nodes)
    if window is None:
        return ()
    inside = _in_window(nodes, window)
    reports_showing = any("showing" in n.states for n in inside[1:])
    inner = inner_texts(inside)
    candidates: list[RawNode] = []
    seen: set[tuple[str, str, object]] = set()
    for node in inside[1:]:
        if node.depth - window.depth > max_depth or not _on_screen(node, reports_showing):
            continue
        key = (node.role, node.name, node.bounds)
        if not _kept(node, inner) or key in seen:
            continue
        seen.add(key)
        candidates.append(node)
    room = max(0, max_nodes - 1)
    kept = {id(n) for n in sorted(candidates, key=_priority)[:room]}
    chosen = [window] + [n for n in candidates if id(n) in kept]
    labels = field_labels(candidates) | toggle_labels(candidates)
    return tuple(
        _as_ui(node, f"e{index}", window.depth, labels.get(node.ref, ""), inner.get(node.ref, ()))
        for index, node in enumerate(chosen, start=1)
    )


def _as_ui(node: RawNode, node_id: str, base_depth: int, label: str, inner: tuple[str, ...]) -> UiNode:
    return UiNode(
        id=node_id,
        ref=node.ref,
        role=node.role,
        name=node.name,
        states=node.states,
        bounds=node.bounds,
        actions=node.actions,
        editable=node.editable,
        text="" if node.secured else node.text,
        depth=node.depth - base_depth,
        secured=node.secured,
        label=label,
        placeholder=node.placeholder,
        inner=inner,
        parent=node.parent or "",
    )
