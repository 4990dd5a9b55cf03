"""The pixel spaces (core/pixels.py): a model's box in screenshot pixels and an AT-SPI box in logical
pixels both end up in X server pixels, scaled and moved, never shrunk, never more than a pixel grown."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from kronii.vision.core.context import Bounds
from kronii.vision.core.pixels import infer_scale, logical_to_screen, screen_point_of, screenshot_to_screen


def test_a_box_on_a_half_size_screenshot_of_an_offset_window_lands_scaled_and_moved() -> None:
    window = Bounds(300, 200, 1600, 1200)  # the window on the screen, in X pixels
    box = Bounds(10, 20, 30, 40)  # on the 800x600 screenshot of it
    assert screenshot_to_screen(box, window, (800, 600)) == Bounds(320, 240, 60, 80)


def test_each_axis_of_a_screenshot_is_scaled_by_its_own_factor() -> None:
    window = Bounds(0, 0, 1000, 300)
    assert screenshot_to_screen(Bounds(100, 100, 10, 10), window, (500, 300)) == Bounds(200, 100, 20, 10)


def test_a_full_size_screenshot_only_moves_the_box() -> None:
    window = Bounds(640, 360, 800, 600)
    assert screenshot_to_screen(Bounds(5, 7, 11, 13), window, (800, 600)) == Bounds(645, 367, 11, 13)


def test_logical_pixels_at_hidpi_scale_2_double_every_edge() -> None:
    box = logical_to_screen(Bounds(100, 50, 40, 20), 2.0)
    assert box == Bounds(200, 100, 80, 40)
    assert screen_point_of(box) == (240, 120)


def test_logical_pixels_at_scale_1_5_round_outwards() -> None:
    # Exact edges 16.5, 31.5, 63 and 93: the left/top edges go down, the right/bottom ones up.
    assert logical_to_screen(Bounds(11, 21, 31, 41), 1.5) == Bounds(16, 31, 47, 62)


def test_logical_pixels_at_scale_1_are_screen_pixels() -> None:
    assert logical_to_screen(Bounds(3, 4, 5, 6), 1.0) == Bounds(3, 4, 5, 6)


_SIDE = st.integers(min_value=1, max_value=4000)


@given(
    origin=st.tuples(st.integers(-2000, 4000), st.integers(-2000, 4000)),
    area=st.tuples(_SIDE, _SIDE),
    shot=st.tuples(_SIDE, _SIDE),
    corner=st.tuples(st.floats(0, 1), st.floats(0, 1)),
    extent=st.tuples(st.floats(0, 1), st.floats(0, 1)),
)
@example(origin=(0, 0), area=(122, 122), shot=(14, 14), corner=(7 / 13, 7 / 13), extent=(0.5, 0.5))
def test_the_round_trip_keeps_a_box_covering_the_original(
    origin: tuple[int, int],
    area: tuple[int, int],
    shot: tuple[int, int],
    corner: tuple[float, float],
    extent: tuple[float, float],
) -> None:
    width, height = shot
    x, y = int(corner[0] * (width - 1)), int(corner[1] * (height - 1))
    box = Bounds(x, y, 1 + int(extent[0] * (width - x - 1)), 1 + int(extent[1] * (height - y - 1)))
    window = Bounds(origin[0], origin[1], *area)
    converted = screenshot_to_screen(box, window, shot)
    # Back in screenshot pixels, exactly: the converted box must cover the original, and by at most
    # one screen pixel too much on each side (float factors such as 122/14 land an edge a hair under
    # its exact integer, and flooring that grows the box by one pixel, never shrinks it).
    fx, fy = Fraction(area[0], width), Fraction(area[1], height)
    left, top = Fraction(converted.x - window.x) / fx, Fraction(converted.y - window.y) / fy
    right = Fraction(converted.x + converted.width - window.x) / fx
    bottom = Fraction(converted.y + converted.height - window.y) / fy
    assert left <= box.x and top <= box.y
    assert right >= box.x + box.width and bottom >= box.y + box.height
    assert (box.x - left) * fx <= 1 and (right - box.x - box.width) * fx <= 1
    assert (box.y - top) * fy <= 1 and (bottom - box.y - box.height) * fy <= 1


@given(
    box=st.builds(
        Bounds, st.integers(0, 3000), st.integers(0, 3000), st.integers(1, 800), st.integers(1, 800)
    ),
    scale=st.sampled_from([1.0, 1.25, 1.5, 1.75, 2.0, 3.0]),
)
def test_logical_to_screen_never_shrinks_a_box(box: Bounds, scale: float) -> None:
    converted = logical_to_screen(box, scale)
    exact = Fraction(scale)
    assert converted.x <= box.x * exact and converted.y <= box.y * exact
    assert converted.x + converted.width >= (box.x + box.width) * exact
    assert converted.y + converted.height >= (box.y + box.height) * exact
    assert converted.width <= math.ceil(box.width * exact) + 1


@pytest.mark.parametrize("size", [(0, 600), (800, 0), (-800, 600)])
def test_a_screenshot_without_pixels_raises_value_error(size: tuple[int, int]) -> None:
    with pytest.raises(ValueError, match="has no pixels to convert from"):
        screenshot_to_screen(Bounds(0, 0, 1, 1), Bounds(0, 0, 800, 600), size)


@pytest.mark.parametrize("scale", [0.0, -2.0, math.nan])
def test_a_scale_that_is_not_positive_raises_value_error(scale: float) -> None:
    with pytest.raises(ValueError, match="must be positive"):
        logical_to_screen(Bounds(0, 0, 1, 1), scale)


def test_the_scale_is_inferred_from_one_window_seen_logically_and_in_device_pixels() -> None:
    assert infer_scale(Bounds(10, 10, 420, 220), Bounds(20, 20, 840, 440), fallback=1.0) == 2.0
    assert infer_scale(Bounds(0, 0, 400, 200), Bounds(0, 0, 600, 300), fallback=1.0) == 1.5
    assert infer_scale(Bounds(0, 0, 400, 200), Bounds(0, 0, 401, 199), fallback=2.0) == 1.0
    # As openbox and GTK3 at GDK_SCALE=2 give them: the frame's extents include the title bar.
    assert infer_scale(Bounds(45, 52, 422, 279), Bounds(92, 137, 840, 520), fallback=1.0) == 2.0


def test_two_views_that_disagree_between_axes_keep_the_fallback_scale() -> None:
    assert infer_scale(Bounds(0, 0, 400, 200), Bounds(0, 0, 800, 200), fallback=1.25) == 1.25
    assert infer_scale(Bounds(0, 0, 0, 200), Bounds(0, 0, 800, 400), fallback=1.0) == 1.0
    assert infer_scale(Bounds(0, 0, 100, 100), Bounds(0, 0, 900, 900), fallback=1.0) == 1.0
