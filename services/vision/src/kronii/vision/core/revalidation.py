"""R6 at the moment of execution: the executor refuses an action still waiting for a person's yes, or
one naming an element the fresh screen no longer has (matched by the object itself, its role and its
name: an id is only a position in one snapshot)."""

from __future__ import annotations

from collections.abc import Sequence

from kronii.vision.core.actions import Action
from kronii.vision.core.context import RawNode, ScreenContext

__all__ = ["current_node", "refusal"]


def current_node(action: Action, approved: ScreenContext, fresh: Sequence[RawNode]) -> RawNode | None:
    """The object `action` names, as the fresh snapshot has it (None: gone, or not the same one)."""
    node = approved.node(action.ui_element_id) if action.ui_element_id else None
    if node is None:
        return None
    for raw in fresh:
        if raw.ref == node.ref and raw.role == node.role and raw.name == node.name:
            return raw
    return None


def refusal(action: Action, approved: ScreenContext, fresh: Sequence[RawNode], confirmed: bool) -> str:
    """Why `action` may not run now ("" when it may)."""
    if action.require_confirmation and not confirmed:
        return f"R6: '{action.describe()}' still needs a person's confirmation"
    if not action.ui_element_id:
        return ""
    if approved.node(action.ui_element_id) is None:
        return f"R6: element {action.ui_element_id} is unknown"
    if current_node(action, approved, fresh) is None:
        node = approved.node(action.ui_element_id)
        assert node is not None
        return f"R6: element {action.ui_element_id} ({node.role} {node.name!r}) is no longer on the screen"
    return ""
