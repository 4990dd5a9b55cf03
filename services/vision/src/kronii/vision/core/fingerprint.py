"""What an approval is bound to: the screen the person saw when they said yes.

The fingerprint covers the redacted screenshot's hash, the pruned tree (role, name, bounds, secured, in
order) and the element ids the plan names. Before each action the executor compares a fresh tree with
the approved one and the screen's pixels with the approved frame: any difference in the tree, or a
pixel diff at or above the threshold, is a changed screen and the plan is made again instead of run."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from kronii.vision.core.actions import Action
from kronii.vision.core.context import ScreenContext, UiNode

__all__ = ["SCREEN_CHANGE_THRESHOLD", "plan_fingerprint", "screen_change", "tree_signature"]

# R1's threshold: below it two frames are the same screen (a caret blink, a clock's second).
SCREEN_CHANGE_THRESHOLD = 0.01


def tree_signature(tree: Sequence[UiNode]) -> str:
    rows = [
        [n.id, n.role, n.name, n.bounds.as_dict() if n.bounds else None, n.secured, n.depth] for n in tree
    ]
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()


def plan_fingerprint(context: ScreenContext, actions: Sequence[Action]) -> str:
    ids = sorted({a.ui_element_id for a in actions if a.ui_element_id})
    basis = {"screen": context.screenshot_hash, "tree": tree_signature(context.tree), "elements": ids}
    return hashlib.sha256(json.dumps(basis, sort_keys=True).encode()).hexdigest()


def screen_change(approved: ScreenContext, fresh: ScreenContext, diff: float) -> str:
    """Why the screen is not the approved one ("" when it still is)."""
    if tree_signature(approved.tree) != tree_signature(fresh.tree):
        return "the window's elements changed since the plan was made"
    if diff >= SCREEN_CHANGE_THRESHOLD:
        return f"the screen changed since the plan was made (pixel difference {diff:.3f})"
    return ""
