"""What an action must be seen to have done (issue 31): an action is `done` only when its effect is
in the accessibility tree afterwards, never because a call returned. Each kind of element has its
effect: a field holds the typed text, a check box's state is the one asked for, a row is selected,
a menu shows its items, a pressed button changed something in its application; a launched app showed
a window. The executor looks until the effect is there or its time is up, then says what it saw.
"Changed" is also what the application says it did (its toolkit's events since the action): a toggle
pressed and let go at once, a display rewritten, can be over before the next look at the tree."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from kronii.vision.core.context import RawNode
from kronii.vision.core.targets import Kind

__all__ = ["Effect", "Observation", "app_of", "effect_for", "observe", "reported_change", "window_refs"]


class Effect(enum.StrEnum):
    CHANGED = "changed"
    CHECKED = "checked"
    UNCHECKED = "unchecked"
    SELECTED = "selected"
    MENU_OPEN = "menu open"
    TEXT = "text"
    FOCUSED = "focused"
    WINDOW = "window"
    NONE = "none"


def effect_for(kind: Kind, *, typing: bool = False, want: str = "", was_checked: bool = False) -> Effect:
    """The effect a click (or typing, with `typing`) on an element of `kind` must have."""
    if typing:
        return Effect.TEXT
    if kind is Kind.TOGGLE:
        if want in ("checked", "unchecked"):
            return Effect(want)
        return Effect.UNCHECKED if was_checked else Effect.CHECKED
    return {
        Kind.ROW: Effect.SELECTED,
        Kind.MENU: Effect.MENU_OPEN,
        Kind.FIELD: Effect.FOCUSED,
    }.get(kind, Effect.CHANGED)


# States whose change is the application doing something; focus and hover come and go with any click.
_MEANINGFUL = frozenset(
    {"checked", "selected", "expanded", "collapsed", "showing", "visible", "sensitive", "enabled",
     "pressed", "indeterminate", "iconified", "modal"}
)  # fmt: skip
# What an application's own events must say to count: a state it keeps for its user (not pressed,
# showing: the press itself, a tooltip), its text, a value.
_SAID_STATES = frozenset(
    {"checked", "selected", "expanded", "collapsed", "sensitive", "enabled", "indeterminate"}
)
_SAID_CHANGED = ("object:text-changed:", "object:property-change:accessible-value")
_MENU_ROLES = frozenset({"menu item", "check menu item", "radio menu item", "menu", "popup menu"})
_OFF_SCREEN = -(2**30)


def _signature(nodes: Sequence[RawNode], pid: int) -> set[tuple[object, ...]]:
    return {(n.ref, n.role, n.name, n.text, n.states & _MEANINGFUL) for n in nodes if not pid or n.pid == pid}


def _on_screen(node: RawNode) -> bool:
    box = node.bounds
    visible = box is not None and not box.empty and box.x > _OFF_SCREEN and box.y > _OFF_SCREEN
    return visible and ("showing" in node.states or "visible" in node.states)


def app_of(ref: str) -> str:
    """The application (its bus name) an object's ref belongs to."""
    return ref.partition("|")[0]


def reported_change(heard: Sequence[tuple[str, str]], app: str = "") -> str:
    """The first event in `heard` ((kind, ref) pairs) that says `app` (any app when "") changed what it
    shows: a state it keeps, its text, a value; "" when none does. Focus, hover, bounds and children
    come with any click or tooltip and say nothing."""
    for kind, ref in heard:
        if app and app_of(ref) != app:
            continue
        state = kind.removeprefix("object:state-changed:")
        if (state != kind and state in _SAID_STATES) or kind.startswith(_SAID_CHANGED):
            return kind
    return ""


def window_refs(nodes: Sequence[RawNode]) -> frozenset[str]:
    return frozenset(n.ref for n in nodes if n.role in ("frame", "window", "dialog", "alert", "file chooser"))


@dataclass(frozen=True)
class Observation:
    """Whether the effect is there (`seen`), and what was seen either way, in words."""

    seen: bool
    what: str


def _target(nodes: Sequence[RawNode], ref: str) -> RawNode | None:
    return next((n for n in nodes if n.ref == ref), None)


def observe(
    effect: Effect,
    ref: str,
    before: Sequence[RawNode],
    after: Sequence[RawNode],
    *,
    text: str = "",
    pid: int = 0,
    heard: Sequence[tuple[str, str]] = (),
) -> Observation:
    """Whether `effect` of an action on the element `ref` is in `after` (compared with `before`), or,
    for CHANGED, in the events `heard` from the element's application since the action."""
    node = _target(after, ref)
    if effect is Effect.NONE:
        return Observation(True, "nothing to see")
    if effect is Effect.WINDOW:
        new = window_refs(after) - window_refs(before)
        return Observation(bool(new), f"{len(new)} new window(s)")
    if effect is Effect.CHANGED:
        if _signature(before, pid) != _signature(after, pid):
            return Observation(True, "the application changed")
        said = reported_change(heard, app_of(ref))
        if said:
            return Observation(True, f"the application reported a change ({said})")
        return Observation(False, "nothing changed in the application")
    if node is None:
        return Observation(False, "the element is gone")
    if effect is Effect.TEXT:
        # Once more than before: a field that already held the words must hold them again.
        earlier = _target(before, ref)
        held = node.text.count(text) > (earlier.text.count(text) if earlier is not None else 0)
        return Observation(held, f"the field holds {node.text[-80:]!r}")
    if effect in (Effect.CHECKED, Effect.UNCHECKED):
        checked = "checked" in node.states
        return Observation(checked == (effect is Effect.CHECKED), "checked" if checked else "not checked")
    if effect is Effect.SELECTED:
        selected = "selected" in node.states
        return Observation(selected, "selected" if selected else "not selected")
    if effect is Effect.FOCUSED:
        return Observation("focused" in node.states, "focused" if "focused" in node.states else "not focused")
    return _menu_opened(node, before, after)


def _menu_opened(node: RawNode, before: Sequence[RawNode], after: Sequence[RawNode]) -> Observation:
    """A menu opened: it says it is expanded, or more menu items are on screen than before."""
    if "expanded" in node.states:
        return Observation(True, "the menu is expanded")
    shown_before = {n.ref for n in before if n.role in _MENU_ROLES and _on_screen(n) and n.pid == node.pid}
    shown_after = {n.ref for n in after if n.role in _MENU_ROLES and _on_screen(n) and n.pid == node.pid}
    opened = bool(shown_after - shown_before - {node.ref})
    return Observation(opened, "its items are on screen" if opened else "no menu opened")
