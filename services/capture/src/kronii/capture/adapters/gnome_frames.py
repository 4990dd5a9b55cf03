"""Grabbing a burst of the focused window on GNOME (mutter) through its screen cast
(kronii.desktop.mutter_screencast): mutter records the window the sensor named, by the id kronii's
GNOME Shell extension gave it, into PipeWire, and only that window's pixels come back, whatever
overlaps it. Without an id (no extension) mutter records the window that has the focus. Everything
here blocks; the app runs it in a worker thread. Failures leave as CaptureUnavailable or WindowGone."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping

from kronii.capture.core.frames import Frame, Geometry
from kronii.capture.ports import CaptureUnavailable, WindowGone
from kronii.desktop.mutter_screencast import ScreenCastError, record_window_burst
from kronii.desktop.session import SCREENCAST_BUS, bus_name_owned, screencast_problem

__all__ = ["GnomeFrames"]

log = logging.getLogger(__name__)

# mutter's answer to RecordWindow for an id it does not know (the window closed meanwhile).
_NO_WINDOW = "Window not found"


class GnomeFrames:
    """A FrameSource on GNOME's session bus (`bus_address`) and PipeWire (`env`'s runtime directory)."""

    display = f"Wayland (GNOME): frames through mutter's screen cast ({SCREENCAST_BUS}) and PipeWire"

    def __init__(self, bus_address: str, env: Mapping[str, str]) -> None:
        self._bus = bus_address
        self._env = dict(env)
        self._lock = threading.Lock()  # one screen cast at a time

    def check(self) -> None:
        """Raise CaptureUnavailable unless mutter's screen cast, PipeWire and GStreamer are there."""
        problem = screencast_problem(self._env, bus_name_owned(SCREENCAST_BUS, self._bus))
        if problem:
            raise CaptureUnavailable(
                f"GNOME gives other programs frames only through its screen cast, and {problem}"
            )

    def geometry(self, window_id: int) -> Geometry:
        """Not needed on GNOME: mutter records the window itself (its size comes with the frames)."""
        return (0, 0, 0, 0)

    def burst(self, region: Geometry, count: int, interval_ms: int, window_id: int = 0) -> list[Frame]:
        """`count` frames of the window `window_id` (mutter's id; 0: the focused one), `interval_ms` apart."""
        with self._lock:
            try:
                burst = record_window_burst(
                    self._bus, self._env, window_id=window_id, count=count, interval_ms=interval_ms
                )
            except ScreenCastError as error:
                if _NO_WINDOW in str(error):
                    raise WindowGone(f"mutter knows no window {window_id} (it closed)") from None
                raise CaptureUnavailable(f"GNOME's screen cast failed: {error}") from None
        return [Frame(rgb, at_ms) for rgb, at_ms in burst.frames]
