"""Grabbing a burst of the focused window's region on a wlroots compositor (sway, Hyprland, river, labwc,
wayfire), in process through wlr-screencopy (kronii.desktop.wayland_screencopy).

Wayland gives a client no other client's geometry, and the window id the sensor sends is its own
toplevel handle, which means nothing on another connection: the rectangle is the focused window's, as
the compositor's IPC tells it (sway: GET_TREE, adapters.sway_ipc), read again right before the burst.
Where there is no such IPC, the frames are of the whole output (they are redacted like any other),
and one log line says so. One connection and one shared-memory pool serve every frame of a burst.
Everything here blocks; the app runs it in a worker thread. Wire errors leave as CaptureUnavailable.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from kronii.capture.adapters.sway_ipc import focused_rect, get_tree
from kronii.capture.core.frames import Frame, Geometry
from kronii.capture.ports import CaptureUnavailable, WindowGone
from kronii.desktop.wayland_screencopy import RegionOffScreen, ScreenCopy
from kronii.desktop.wayland_wire import WaylandError

__all__ = ["WaylandFrames"]

log = logging.getLogger(__name__)


class WaylandFrames:
    """A FrameSource on a wlroots compositor's socket; `ipc` is sway's IPC socket when there is one."""

    def __init__(
        self,
        socket: Path,
        compositor: str,
        *,
        ipc: Path | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.display = f"Wayland ({compositor}): frames through wlr-screencopy"
        self._socket = socket
        self._compositor = compositor
        self._ipc = ipc
        self._sleep = sleep
        self._said_whole_output = False
        self._lock = threading.Lock()  # one burst at a time on the compositor

    def _connect(self) -> ScreenCopy:
        try:
            return ScreenCopy(self._socket)
        except WaylandError as error:
            raise CaptureUnavailable(f"cannot copy the screen of {self._compositor}: {error}") from None

    def check(self) -> None:
        """Raise CaptureUnavailable unless the compositor answers and offers screen copy."""
        self._connect().close()

    def geometry(self, window_id: int) -> Geometry:
        """The focused window's rectangle (not `window_id`'s: see the module's note), else the whole
        output."""
        if self._ipc is not None:
            return focused_rect(get_tree(self._ipc))
        if not self._said_whole_output:
            self._said_whole_output = True
            log.warning(
                "%s tells no other program where the focused window is: capture takes the whole output",
                self._compositor,
            )
        screen = self._connect()
        try:
            first = min(screen.outputs, key=lambda output: (output.y, output.x))
        finally:
            screen.close()
        return (first.x, first.y, first.width, first.height)

    def burst(self, region: Geometry, count: int, interval_ms: int, window_id: int = 0) -> list[Frame]:
        """`count` frames of `region`, `interval_ms` apart (measured from one grab's start to the next)."""
        x, y, width, height = region
        frames: list[Frame] = []
        with self._lock:
            screen = self._connect()
            try:
                started = time.monotonic()
                for index in range(count):
                    if index:
                        due = started + index * interval_ms / 1000.0
                        self._sleep(max(0.0, due - time.monotonic()))
                    rgb = screen.region(x, y, width, height)
                    frames.append(Frame(rgb, int(time.time() * 1000)))
            except RegionOffScreen as error:
                raise WindowGone(f"the window lies off screen: {error}") from None
            except WaylandError as error:
                raise CaptureUnavailable(
                    f"copying the screen of {self._compositor} failed: {error}"
                ) from None
            finally:
                screen.close()
        return frames
