"""Staleness compares the target window's pixels only, less what kronii drew over it (core/diff.py's
region and masks, core/fingerprint.py's binding_change and watched_diff)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from kronii.vision.core.context import Bounds, ScreenContext, WindowFacts
from kronii.vision.core.diff import Cells, cells_of, diff_score
from kronii.vision.core.fingerprint import binding_change, plan_fingerprint, watched_diff
from kronii.vision.core.front import XDesk, XWindow

WINDOW = WindowFacts(0xA00003, 20, "Question", "Zenity", Bounds(160, 160, 400, 240))
BUBBLE = Bounds(400, 200, 240, 80)  # over the window's right part


def frame() -> np.ndarray:
    return np.full((96, 128), 90, dtype=np.uint8)  # a 1024x768 screen reduced 1/8


def paint(image: np.ndarray, box: Bounds, level: int) -> np.ndarray:
    out = image.copy()
    cells = cells_of(box.x, box.y, box.width, box.height)
    out[cells.top : cells.bottom, cells.left : cells.right] = level
    return out


def context(window: WindowFacts | None) -> ScreenContext:
    return ScreenContext(
        "", "", (0, 0), Bounds(0, 0, 0, 0), (), (), "Question", Bounds(0, 0, 1024, 768), 1.0, 0, window=window
    )


def test_a_rectangle_touches_every_cell_it_covers_even_in_part() -> None:
    assert cells_of(0, 0, 8, 8) == Cells(0, 0, 1, 1)
    assert cells_of(4, 4, 8, 8) == Cells(0, 0, 2, 2)


def test_a_change_outside_the_region_does_not_count() -> None:
    before = frame()
    after = paint(before, Bounds(800, 600, 200, 100), 250)
    assert diff_score(before, after) > 0.01
    assert diff_score(before, after, cells_of(160, 160, 400, 240)) == 0.0


def test_a_masked_bubble_inside_the_region_does_not_count_and_a_change_beside_it_does() -> None:
    before = frame()
    bubble = paint(before, BUBBLE, 250)
    region, mask = cells_of(160, 160, 400, 240), cells_of(BUBBLE.x, BUBBLE.y, BUBBLE.width, BUBBLE.height)
    assert diff_score(before, bubble, region) > 0.1
    assert diff_score(before, bubble, region, [mask]) == 0.0
    filled = paint(bubble, Bounds(200, 300, 120, 24), 10)  # a field filled, beside the bubble
    assert diff_score(before, filled, region, [mask]) > 0.01


def test_a_wholly_masked_region_has_nothing_to_compare() -> None:
    before = frame()
    region = cells_of(160, 160, 400, 240)
    assert diff_score(before, paint(before, Bounds(160, 160, 400, 240), 250), region, [region]) == 0.0


def test_the_confirmation_bubble_over_the_window_does_not_make_the_approval_stale() -> None:
    approved_frame, approved = frame(), context(WINDOW)
    now = context(replace(WINDOW, covered=(BUBBLE,)))
    assert binding_change(approved, approved_frame, now, paint(approved_frame, BUBBLE, 250)) == ""


def test_a_real_change_inside_the_window_still_makes_the_approval_stale() -> None:
    approved_frame, approved = frame(), context(WINDOW)
    now = context(replace(WINDOW, covered=(BUBBLE,)))
    changed = paint(paint(approved_frame, BUBBLE, 250), Bounds(200, 300, 120, 24), 10)
    assert "pixel difference" in binding_change(approved, approved_frame, now, changed)


def test_another_window_in_front_makes_the_approval_stale_with_both_names() -> None:
    other = WindowFacts(0x200006, 10, "Untitled", "FeatherPad", Bounds(100, 100, 700, 500))
    change = binding_change(context(WINDOW), frame(), context(other), frame())
    assert change == (
        "the window in front is now 'Untitled' (FeatherPad), not 'Question' (Zenity) the plan was made for"
    )


def test_the_window_a_plan_was_made_for_is_part_of_its_fingerprint() -> None:
    other = replace(WINDOW, x_id=0xB00001)
    assert plan_fingerprint(context(WINDOW), ()) != plan_fingerprint(context(other), ())
    assert plan_fingerprint(context(WINDOW), ()) == plan_fingerprint(
        context(replace(WINDOW, covered=(BUBBLE,))), ()
    )


def test_the_screen_watch_ignores_a_bubble_appearing_and_going_over_the_waiting_plans_window() -> None:
    target = XWindow(WINDOW.x_id, 20, "Question", "Zenity", WINDOW.area)
    bubble = XWindow(0x600001, 40, "", "Dunst", BUBBLE, notification=True)
    without, with_bubble = (
        XDesk(target.window_id, target.window_id, (target,)),
        XDesk(target.window_id, target.window_id, (target, bubble)),
    )
    plain, shown = frame(), paint(frame(), BUBBLE, 250)
    assert watched_diff(plain, without, shown, with_bubble, [WINDOW]) == 0.0
    assert watched_diff(shown, with_bubble, plain, without, [WINDOW]) == 0.0
    assert watched_diff(plain, without, shown, with_bubble, []) > 0.01  # no plan waiting: the whole screen
    gone = XDesk(0, 0, ())
    assert watched_diff(plain, without, plain, gone, [WINDOW]) == 1.0
