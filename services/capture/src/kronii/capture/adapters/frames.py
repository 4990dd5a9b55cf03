"""Grabbing a burst of one window's region from the X display with mss.

The window's rectangle comes from X itself (python-xlib: the window's size and its position
translated to root coordinates), read again right before the burst: the sensor's focus events carry
no geometry, and a window may have moved since it gained focus. Everything here blocks; the app runs
it in a worker thread. Frames stay in memory: nothing here touches the disk. Xlib and mss errors
leave as the ports' CaptureUnavailable and WindowGone.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import mss
import numpy as np
from kronii.capture.core.frames import Frame, Geometry
from kronii.capture.ports import CaptureUnavailable, WindowGone
from Xlib import X
from Xlib import display as xdisplay
from Xlib import error as xerror

__all__ = ["CaptureUnavailable", "FrameGrabber", "WindowGone"]


class FrameGrabber:
    """Reads window geometry and grabs regions on one X display."""

    def __init__(self, display: str, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self.display = display
        self._sleep = sleep

    def check(self) -> None:
        """Raise CaptureUnavailable unless the display answers."""
        try:
            dpy = xdisplay.Display(self.display)
        except Exception as error:  # Xlib raises several unrelated types for "no display"
            raise CaptureUnavailable(f"cannot open display {self.display}: {type(error).__name__}") from None
        dpy.close()

    def geometry(self, window_id: int) -> Geometry:
        """The window's visible rectangle in root coordinates, clipped to the screen."""
        try:
            dpy = xdisplay.Display(self.display)
        except Exception as error:
            raise CaptureUnavailable(f"cannot open display {self.display}: {type(error).__name__}") from None
        try:
            root = dpy.screen().root
            window = dpy.create_resource_object("window", window_id)
            attributes = window.get_attributes()
            if attributes.map_state != X.IsViewable:
                raise WindowGone(f"window {window_id:#x} is not viewable")
            size = window.get_geometry()
            origin = window.translate_coords(root, 0, 0)
            screen_w, screen_h = dpy.screen().width_in_pixels, dpy.screen().height_in_pixels
        except (xerror.BadWindow, xerror.BadDrawable, xerror.BadMatch):
            raise WindowGone(f"window {window_id:#x} does not exist") from None
        finally:
            dpy.close()
        # translate_coords(root, 0, 0) gives the root origin in the window's frame: negate it.
        x0, y0 = -int(origin.x), -int(origin.y)
        x1, y1 = x0 + int(size.width), y0 + int(size.height)
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, screen_w), min(y1, screen_h)
        if x1 - x0 < 8 or y1 - y0 < 8:
            raise WindowGone(f"window {window_id:#x} lies off screen")
        return (x0, y0, x1 - x0, y1 - y0)

    def burst(self, region: Geometry, count: int, interval_ms: int, window_id: int = 0) -> list[Frame]:
        """`count` frames of `region`, `interval_ms` apart (measured from one grab's start to the next)."""
        x, y, width, height = region
        box = {"left": x, "top": y, "width": width, "height": height}
        frames: list[Frame] = []
        try:
            with mss.MSS(display=self.display) as screen:
                started = time.monotonic()
                for index in range(count):
                    if index:
                        due = started + index * interval_ms / 1000.0
                        self._sleep(max(0.0, due - time.monotonic()))
                    shot = screen.grab(box)
                    rgb = np.frombuffer(shot.rgb, dtype=np.uint8).reshape(shot.height, shot.width, 3)
                    frames.append(Frame(rgb.copy(), int(time.time() * 1000)))
        except mss.exception.ScreenShotError as error:
            raise CaptureUnavailable(f"grabbing the screen failed: {type(error).__name__}") from None
        return frames

    def full_screen(self) -> Frame:
        """The whole screen (the benchmark's baseline)."""
        with mss.MSS(display=self.display) as screen:
            shot = screen.grab(screen.monitors[1])
            rgb = np.frombuffer(shot.rgb, dtype=np.uint8).reshape(shot.height, shot.width, 3)
            return Frame(rgb.copy(), int(time.time() * 1000))
