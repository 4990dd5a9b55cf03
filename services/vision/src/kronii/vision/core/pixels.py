"""The one conversion between the three pixel spaces a plan touches (HiDPI bugs live here elsewhere:
coordinates computed on a downscaled screenshot and sent unscaled, logical vs device pixels).

- screenshot pixels: the redacted frame capture returned (OCR zones, a model's click_by_bounds box);
  the frame shows `capture_area` of the screen, possibly scaled to `screenshot_size`.
- logical pixels: what AT-SPI's screen coordinates give (GTK under GDK_SCALE=2 reports half).
- screen pixels: the X server's, where the broker injects a click.
"""

from __future__ import annotations

import math

from kronii.vision.core.context import Bounds

__all__ = ["infer_scale", "logical_to_screen", "screen_point_of", "screenshot_to_screen"]


def _checked_size(screenshot_size: tuple[int, int]) -> tuple[int, int]:
    width, height = screenshot_size
    if width <= 0 or height <= 0:
        raise ValueError(f"a screenshot of {width}x{height} pixels has no pixels to convert from")
    return width, height


def screenshot_to_screen(box: Bounds, capture_area: Bounds, screenshot_size: tuple[int, int]) -> Bounds:
    """`box` in screenshot pixels as screen pixels: scaled by the frame's own factor per axis, then
    moved to where the frame lies on the screen. Edges are floored/ceiled so the box never shrinks."""
    width, height = _checked_size(screenshot_size)
    fx = capture_area.width / width
    fy = capture_area.height / height
    left = capture_area.x + math.floor(box.x * fx)
    top = capture_area.y + math.floor(box.y * fy)
    right = capture_area.x + math.ceil((box.x + box.width) * fx)
    bottom = capture_area.y + math.ceil((box.y + box.height) * fy)
    return Bounds(left, top, right - left, bottom - top)


def logical_to_screen(box: Bounds, scale: float) -> Bounds:
    """AT-SPI's logical screen coordinates as X pixels (`scale` device pixels per logical pixel)."""
    if not scale > 0:
        raise ValueError(f"a scale factor must be positive, not {scale}")
    left, top = math.floor(box.x * scale), math.floor(box.y * scale)
    right = math.ceil((box.x + box.width) * scale)
    bottom = math.ceil((box.y + box.height) * scale)
    return Bounds(left, top, right - left, bottom - top)


def screen_point_of(box: Bounds) -> tuple[int, int]:
    """Where a click on `box` (screen pixels) lands: its centre."""
    return box.center()


def infer_scale(logical: Bounds, device: Bounds, fallback: float) -> float:
    """Device pixels per logical pixel, from one window seen both ways: AT-SPI's extents of the frame
    (logical) and the X server's geometry of the same window (device). The width decides (a window
    manager's title bar makes the frame taller than the client, never much wider); the height must
    roughly agree. Rounded to a quarter, as toolkits scale; `fallback` when the views disagree."""
    if logical.empty or device.empty:
        return fallback
    across, down = device.width / logical.width, device.height / logical.height
    if abs(across - down) > 0.15 * across:
        return fallback
    scale = round(across * 4) / 4
    return scale if 0.5 <= scale <= 4 else fallback


def surface_origin(tree_window: Bounds | None, x_area: Bounds | None) -> tuple[int, int]:
    """Where the toolkit's (0, 0) is on the screen, in X pixels. GTK4 on X11 gives every extent
    relative to its own window (the window itself at 0, 0), whatever the coordinate type asked: its
    window's X rectangle is then where those extents start. Toolkits that give screen extents: (0, 0)."""
    if tree_window is None or x_area is None or (tree_window.x, tree_window.y) != (0, 0):
        return 0, 0
    return x_area.x, x_area.y
