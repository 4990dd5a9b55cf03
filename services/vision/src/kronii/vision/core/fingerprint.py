"""What an approval is bound to: the screen the person saw when they said yes.

The fingerprint covers the redacted screenshot's hash, the pruned tree (role, name, bounds, secured, in
order), the element ids the plan names and the X window it was made for (id, process, title, area).
An approval, and the executor before the first action, compare a fresh look with the approved one: a
different window in front, any difference in the tree, or a pixel diff at or above the threshold is a
changed screen and the plan is made again instead of run. The pixels compared are the target window's
only, less what is drawn over it that is not the application's (kronii's confirmation bubble)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from kronii.vision.core.actions import Action
from kronii.vision.core.context import Bounds, ScreenContext, UiNode, WindowFacts
from kronii.vision.core.diff import Cells, cells_of, diff_score
from kronii.vision.core.front import XDesk, covering

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "SCREEN_CHANGE_THRESHOLD",
    "binding_change",
    "plan_fingerprint",
    "screen_change",
    "tree_signature",
    "watched_diff",
    "window_diff",
]

# R1's threshold: below it two frames are the same screen (a caret blink, a clock's second).
SCREEN_CHANGE_THRESHOLD = 0.01


def tree_signature(tree: Sequence[UiNode]) -> str:
    rows = [
        [n.id, n.role, n.name, n.bounds.as_dict() if n.bounds else None, n.secured, n.depth] for n in tree
    ]
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()


def plan_fingerprint(context: ScreenContext, actions: Sequence[Action]) -> str:
    ids = sorted({a.ui_element_id for a in actions if a.ui_element_id})
    window = context.window.as_dict() if context.window is not None else None
    basis = {
        "screen": context.screenshot_hash, "tree": tree_signature(context.tree), "elements": ids,
        "window": window,
    }  # fmt: skip
    return hashlib.sha256(json.dumps(basis, sort_keys=True).encode()).hexdigest()


def screen_change(approved: ScreenContext, fresh: ScreenContext, diff: float) -> str:
    """Why the screen is not the approved one ("" when it still is)."""
    if tree_signature(approved.tree) != tree_signature(fresh.tree):
        return "the window's elements changed since the plan was made"
    if diff >= SCREEN_CHANGE_THRESHOLD:
        return f"the screen changed since the plan was made (pixel difference {diff:.3f})"
    return ""


def _cells(box: Bounds) -> Cells:
    return cells_of(box.x, box.y, box.width, box.height)


def window_diff(
    approved: ScreenContext, approved_frame: np.ndarray | None, fresh: ScreenContext, fresh_frame: np.ndarray
) -> float:
    """The pixel difference inside the approved window, less the parts drawn over it then or now by
    what is not the application's; the whole screen's when the plan was made without X facts."""
    if approved_frame is None:
        return 0.0
    window = approved.window
    if window is None:
        return diff_score(approved_frame, fresh_frame)
    covered = window.covered + (fresh.window.covered if fresh.window is not None else ())
    return diff_score(approved_frame, fresh_frame, _cells(window.area), [_cells(box) for box in covered])


def _window_change(approved: WindowFacts | None, fresh: WindowFacts | None) -> str:
    if approved is None:
        return ""
    if fresh is None:
        return f"the window in front can no longer be read; the plan was made for {approved.title!r}"
    if fresh.x_id != approved.x_id:
        return (
            f"the window in front is now {fresh.title!r} ({fresh.app}), not {approved.title!r} "
            f"({approved.app}) the plan was made for"
        )
    if fresh.area != approved.area:
        return f"the window {approved.title!r} moved or was resized since the plan was made"
    return ""


def binding_change(
    approved: ScreenContext, approved_frame: np.ndarray | None, fresh: ScreenContext, fresh_frame: np.ndarray
) -> str:
    """Why the screen is not the one a plan was approved on ("" when it still is): another window in
    front, the window's elements, or its pixels (see the module)."""
    moved = _window_change(approved.window, fresh.window)
    if moved:
        return moved
    return screen_change(approved, fresh, window_diff(approved, approved_frame, fresh, fresh_frame))


def watched_diff(
    previous: np.ndarray,
    previous_desk: XDesk | None,
    current: np.ndarray,
    current_desk: XDesk | None,
    windows: Sequence[WindowFacts | None],
) -> float:
    """The screen watch's difference between two ticks for the plans waiting on `windows`: the largest
    over their windows, each less what was drawn over it (then or now) that is not the application's;
    a window gone from the screen is wholly changed. The whole screen's without X facts."""
    if not windows or previous_desk is None or current_desk is None or None in windows:
        return diff_score(previous, current)
    score = 0.0
    for window in windows:
        assert window is not None
        if current_desk.window(window.x_id) is None:
            return 1.0
        masks = window.covered + covering(previous_desk, window.x_id) + covering(current_desk, window.x_id)
        region = _cells(window.area)
        score = max(score, diff_score(previous, current, region, [_cells(box) for box in masks]))
    return score
