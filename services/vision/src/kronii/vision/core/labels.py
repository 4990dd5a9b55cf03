"""The words a person sees next to an element, for the elements that do not carry them as their name.

A field is called by its label: the labelled-by relation when the toolkit gives one, else the label a
person sees beside it (on its left, on the same line) or just above it; a zenity form or a Qt dialog
built without buddies has only the second. A button whose name is a toolkit class (GTK4's "GtkButton")
is called by the label inside it."""

from __future__ import annotations

from collections.abc import Sequence

from kronii.vision.core.context import Bounds, RawNode
from kronii.vision.core.targets import FIELD_ROLES, LABEL_ROLES, ROW_ROLES, useful_name

__all__ = ["field_labels", "inner_texts", "toggle_labels"]

# How far (in logical pixels) a label may sit from its field: on the same line, or above it.
_BESIDE_MAX = 320
_ABOVE_MAX = 48


def _is_field(node: RawNode) -> bool:
    return node.role in FIELD_ROLES or node.editable or node.secured or node.role == "combo box"


def _beside(label: Bounds, field: Bounds) -> float | None:
    """The label's distance from the field when it reads as the field's label, else None."""
    label_mid = label.y + label.height / 2
    left_gap = field.x - (label.x + label.width)
    if field.y - 2 <= label_mid <= field.y + field.height + 2 and -4 <= left_gap <= _BESIDE_MAX:
        return max(left_gap, 0)
    above_gap = field.y - (label.y + label.height)
    overlaps = label.x < field.x + field.width and label.x + label.width > field.x - 8
    if -2 <= above_gap <= _ABOVE_MAX and overlaps:
        return max(above_gap, 0) + 1000  # a label on the same line wins over one above
    return None


def _related(field: RawNode) -> str:
    return next((useful_name(n) for n in field.labelled_by if useful_name(n)), "")


def _nearby(fields: Sequence[RawNode], labels: Sequence[RawNode]) -> list[tuple[float, RawNode, RawNode]]:
    """(distance, field, label) for every label that reads as a field's, nearest first."""
    pairs = []
    for field in fields:
        for label in labels:
            if field.bounds is None or label.bounds is None:
                continue
            distance = _beside(label.bounds, field.bounds)
            if distance is not None:
                pairs.append((distance, field, label))
    return sorted(pairs, key=lambda pair: pair[0])


def field_labels(nodes: Sequence[RawNode]) -> dict[str, str]:
    """Field ref -> the label a person calls it by. Each label names at most one field: the nearest."""
    labels = [n for n in nodes if n.role in LABEL_ROLES and useful_name(n.name)]
    fields = [n for n in nodes if _is_field(n)]
    named = {f.ref: _related(f) for f in fields if _related(f)}
    used: set[str] = set()
    for _distance, field, label in _nearby([f for f in fields if f.ref not in named], labels):
        if field.ref in named or label.ref in used:
            continue
        named[field.ref] = useful_name(label.name)
        used.add(label.ref)
    return named


def inner_texts(nodes: Sequence[RawNode]) -> dict[str, tuple[str, ...]]:
    """Element ref -> the names of the labels inside it (up to three levels down)."""
    inner: dict[str, tuple[str, ...]] = {}
    for index, node in enumerate(nodes):
        if node.role in LABEL_ROLES:
            continue
        texts: list[str] = []
        for below in nodes[index + 1 :]:
            if below.depth <= node.depth:
                break
            if below.depth - node.depth <= 3 and below.role in LABEL_ROLES and useful_name(below.name):
                texts.append(useful_name(below.name))
        if texts:
            inner[node.ref] = tuple(texts[:3])
    return inner


def _is_unnamed_toggle(node: RawNode) -> bool:
    actions = {a.lower() for a in node.actions}
    return not useful_name(node.name) and bool(actions & {"toggle", "check", "uncheck"})


def _same_line(label: Bounds, box: Bounds) -> float | None:
    """How far a text sits from a check box on its line (right of it first, then left), or None."""
    label_mid = label.y + label.height / 2
    if not box.y - 2 <= label_mid <= box.y + box.height + 2:
        return None
    right_gap = label.x - (box.x + box.width)
    if -4 <= right_gap <= _BESIDE_MAX:
        return max(right_gap, 0)
    left_gap = box.x - (label.x + label.width)
    return max(left_gap, 0) + 1000 if -4 <= left_gap <= _BESIDE_MAX else None


def toggle_labels(nodes: Sequence[RawNode]) -> dict[str, str]:
    """Unnamed check box ref -> the text on its line a person calls it by: a list's check column is
    called by its row's text ("check Banana"), a bare check box by the label beside it."""
    texts = [n for n in nodes if (n.role in LABEL_ROLES or n.role in ROW_ROLES) and useful_name(n.name)]
    named: dict[str, str] = {}
    for toggle in (n for n in nodes if _is_unnamed_toggle(n) and n.bounds is not None):
        assert toggle.bounds is not None
        near = [
            (distance, text)
            for text in texts
            if text.bounds is not None and (distance := _same_line(text.bounds, toggle.bounds)) is not None
        ]
        if near:
            named[toggle.ref] = useful_name(min(near, key=lambda pair: pair[0])[1].name)
    return named
