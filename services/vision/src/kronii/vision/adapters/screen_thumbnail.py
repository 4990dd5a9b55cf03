"""Reduced grayscale frames of the whole X screen, for the pixel diff (R1) and nothing else.

The root window is read with GetImage (ZPixmap, all planes) in horizontal bands, each reduced at once
(`core.diff.reduce`): the full-resolution pixels live only in the band being reduced, are never stored
and never leave the process; only the thumbnail (240x135 for 1920x1080 at 1/8) is returned.

Bands, not one request: on a 1920x1080 Xvfb one 8 MB GetImage took 7-37 ms (python-xlib reading one
large reply), 128-row bands 4.5-5 ms in all; with the reduction a grab takes about 20 ms.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import numpy as np
from kronii.vision.core.diff import DEFAULT_FACTOR, reduce
from Xlib import X
from Xlib import display as xdisplay
from Xlib import error as xerror

__all__ = ["ScreenThumbnails", "ThumbnailError"]

_BAND_ROWS = 128
_ALL_PLANES = 0xFFFFFFFF


class ThumbnailError(RuntimeError):
    """The screen could not be read: `str()` is a sentence saying why."""


def _connect(name: str | None) -> Any:
    shown = name if name is not None else os.environ.get("DISPLAY")
    if not shown:
        raise ThumbnailError("no X display to read the screen from: DISPLAY is not set and none was given")
    try:
        return xdisplay.Display(shown)
    except xerror.DisplayNameError as exc:
        raise ThumbnailError(f"cannot read the screen: {shown!r} is not a valid X display name") from exc
    except (xerror.DisplayError, xerror.ConnectionClosedError, OSError) as exc:
        raise ThumbnailError(f"cannot read the screen: no connection to the X display {shown!r}") from exc


def _byte_index(mask: int, byte_order: int) -> int | None:
    """Which byte of a 32-bit pixel holds the channel `mask` selects, or None if it is not one byte."""
    if mask <= 0:
        return None
    shift = (mask & -mask).bit_length() - 1
    if shift % 8 or shift > 24 or mask >> shift != 0xFF:
        return None
    lsb_index = shift // 8
    return lsb_index if byte_order == X.LSBFirst else 3 - lsb_index


def _rgb_indices(dpy: Any) -> tuple[int, int, int]:
    """Byte offsets of red, green and blue in the root's 32-bit ZPixmap pixels."""
    screen = dpy.screen()
    formats = {fmt.depth: fmt.bits_per_pixel for fmt in dpy.display.info.pixmap_formats}
    visual = next(
        (v for depth in screen.allowed_depths for v in depth.visuals if v.visual_id == screen.root_visual),
        None,
    )
    if formats.get(screen.root_depth) != 32 or visual is None:
        raise ThumbnailError(
            f"cannot read the screen: a root of depth {screen.root_depth} with "
            f"{formats.get(screen.root_depth)} bits per pixel is not supported (only 32-bit true colour)"
        )
    order = dpy.display.info.image_byte_order
    indices = tuple(_byte_index(m, order) for m in (visual.red_mask, visual.green_mask, visual.blue_mask))
    if None in indices:
        raise ThumbnailError("cannot read the screen: its colour channels are not whole bytes")
    red, green, blue = (int(index) for index in indices if index is not None)
    return red, green, blue


class ScreenThumbnails:
    """Reduced grayscale frames of the X screen (`grab`) and its size in X pixels (`screen_size`).

    One connection, used from one thread at a time (the context builder grabs from a worker thread)."""

    def __init__(self, display: str | None = None, *, factor: int = DEFAULT_FACTOR) -> None:
        if factor < 1:
            raise ValueError("the reduction factor must be at least 1")
        self._factor = factor
        # A band a whole number of blocks tall, so the bands' cells are the whole frame's cells.
        self._band_rows = max(factor, _BAND_ROWS // factor * factor)
        self._dpy = _connect(display)
        try:
            self._root = self._dpy.screen().root
            self._channels = list(_rgb_indices(self._dpy))
        except BaseException:
            self.close()
            raise

    def screen_size(self) -> tuple[int, int]:
        """(width, height) of the root window now, in X pixels (it changes with the resolution)."""
        try:
            geometry = self._root.get_geometry()
        except (xerror.XError, xerror.ConnectionClosedError, OSError) as exc:
            raise ThumbnailError(f"cannot read the screen's size: the X display went away ({exc})") from exc
        return int(geometry.width), int(geometry.height)

    def grab(self) -> np.ndarray:
        """The whole screen now, reduced `factor` times to a uint8 grayscale array (see core.diff)."""
        width, height = self.screen_size()
        cells = []
        for top in range(0, height, self._band_rows):
            rows = min(self._band_rows, height - top)
            cells.append(self._band(top, rows, width))
        return np.vstack(cells)

    def _band(self, top: int, rows: int, width: int) -> np.ndarray:
        try:
            reply = self._root.get_image(0, top, width, rows, X.ZPixmap, _ALL_PLANES)
        except (xerror.XError, xerror.ConnectionClosedError, OSError) as exc:
            raise ThumbnailError(
                f"cannot read the screen: GetImage on the root window failed ({exc})"
            ) from exc
        data = bytes(reply.data)
        if len(data) != rows * width * 4:
            raise ThumbnailError(
                f"cannot read the screen: the X server sent {len(data)} bytes for {width}x{rows} pixels"
            )
        pixels = np.frombuffer(data, dtype=np.uint8).reshape(rows, width, 4)
        return reduce(pixels[..., self._channels], self._factor)

    def close(self) -> None:
        with contextlib.suppress(xerror.ConnectionClosedError, OSError):
            self._dpy.close()

    def __enter__(self) -> ScreenThumbnails:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
