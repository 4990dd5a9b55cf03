"""The desktop as the use cases see it: the accessibility tree and the screen's frames, connected on
first use (the engine starts before a session bus or X display may be there) and failing with
kronii's Unavailable and a sentence a person can act on, never a D-Bus or X error."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections import deque
from typing import TYPE_CHECKING

from kronii.foundation.errors import Unavailable
from kronii.vision.adapters.atspi import AtspiReader
from kronii.vision.adapters.atspi_bus import AccessibilityError
from kronii.vision.adapters.capture_frames import front_window
from kronii.vision.adapters.screen_thumbnail import ScreenThumbnails, ThumbnailError
from kronii.vision.adapters.x_windows import XWindows, XWindowsError
from kronii.vision.core.context import Bounds, RawNode
from kronii.vision.core.front import XDesk
from kronii.vision.ports import ScreenshotUnavailable

if TYPE_CHECKING:
    import numpy as np

__all__ = ["DesktopFrames", "DesktopTree", "screen_scale"]


def screen_scale(environ: dict[str, str] | None = None) -> float:
    """Device pixels per logical pixel, as GTK applications on this desktop use it (GDK_SCALE)."""
    env = os.environ if environ is None else environ
    try:
        scale = float(env.get("GDK_SCALE", "1") or "1")
    except ValueError:
        return 1.0
    return scale if scale > 0 else 1.0


class DesktopTree:
    """The tree, read again only when the toolkits say it changed: object events (children, names,
    bounds, focus, windows) mark the last walk stale; without an event it is reused for up to
    `max_age_s`. A `fresh` read (an approval, each step of a run) always walks. The latest events are
    kept (`heard_since`), so an action's effect that came and went between two walks is still known."""

    HEARD_KEPT = 4096

    def __init__(self, reader: AtspiReader, *, max_age_s: float = 2.0) -> None:
        self._reader = reader
        self._lock = asyncio.Lock()
        self._max_age_s = max_age_s
        self._events = 0
        self._heard: deque[tuple[int, str, str]] = deque(maxlen=self.HEARD_KEPT)
        self._watching = False
        self._last: tuple[tuple[RawNode, ...], int, float] | None = None
        self.walks = 0
        self.reused = 0
        self.connected = False
        self.problem = "not connected yet"

    def _changed(self, kind: str, ref: str) -> None:
        self._events += 1
        self._heard.append((self._events, kind, ref))

    def mark(self) -> int:
        """Where the events stand now, for `heard_since`."""
        return self._events

    def heard_since(self, mark: int) -> tuple[tuple[str, str], ...]:
        """The (kind, ref) of each event after `mark`, oldest first (only the latest HEARD_KEPT)."""
        return tuple((kind, ref) for number, kind, ref in self._heard if number > mark)

    async def _ready(self) -> AtspiReader:
        async with self._lock:
            if not self.connected:
                try:
                    await self._reader.connect()
                except AccessibilityError as error:
                    self.problem = str(error)
                    raise Unavailable(
                        f"the desktop's accessibility bus is out of reach ({str(error).rstrip('.')}): the vision "
                        "engine must run in the person's desktop session (kronii up started from it, or its "
                        "DBUS_SESSION_BUS_ADDRESS and DISPLAY)"
                    ) from None
                self.connected, self.problem = True, ""
                self._watching = await self._watch()
        return self._reader

    async def _watch(self) -> bool:
        try:
            await self._reader.watch(self._changed)
        except AccessibilityError:
            return False  # no events: every read walks
        return True

    async def _reset(self, error: AccessibilityError) -> Unavailable:
        self.connected, self.problem, self._last, self._watching = False, str(error), None, False
        await self._reader.close()
        return Unavailable(f"reading the accessibility tree failed: {error}")

    async def snapshot(self, fresh: bool = False) -> tuple[RawNode, ...]:
        reader = await self._ready()
        last = self._last
        if not fresh and self._watching and last is not None:
            nodes, events, at = last
            if events == self._events and time.monotonic() - at < self._max_age_s:
                self.reused += 1
                return nodes
        events = self._events
        try:
            nodes = await reader.snapshot()
        except AccessibilityError as error:
            raise await self._reset(error) from None
        self.walks += 1
        self._last = (nodes, events, time.monotonic())
        return nodes

    async def do_action(self, ref: str, name: str = "click") -> bool:
        reader = await self._ready()
        try:
            return await reader.do_action(ref, name)
        except AccessibilityError:
            return False  # the executor falls back to a click through the broker

    async def set_text(self, ref: str, text: str) -> bool:
        reader = await self._ready()
        try:
            return await reader.set_text(ref, text)
        except AccessibilityError:
            return False

    async def grab_focus(self, ref: str) -> bool:
        reader = await self._ready()
        try:
            return await reader.grab_focus(ref)
        except AccessibilityError:
            return False

    async def select(self, ref: str, parent: str) -> bool:
        reader = await self._ready()
        try:
            return bool(parent) and await reader.select(ref, parent)
        except AccessibilityError:
            return False  # the executor clicks the row through the broker instead

    async def close(self) -> None:
        await self._reader.close()


class DesktopFrames:
    """One X connection for the frames, used by one thread at a time: python-xlib's connection is not
    thread-safe, and a context build, the screen watch and an approval may all look at once (without
    the lock, a few concurrent requests left a reply half read and the engine hung)."""

    def __init__(self, display: str | None, refusal: str | None = None) -> None:
        self._display = display
        self._frames: ScreenThumbnails | None = None
        self._windows: XWindows | None = None
        self._lock = threading.Lock()
        # A Wayland session: DISPLAY is XWayland's, whose frames and windows are not the person's desktop.
        self._refusal = refusal
        self.problem = refusal or ""

    def _ready(self) -> ScreenThumbnails:
        if self._refusal is not None:
            raise Unavailable(self._refusal)
        if self._frames is None:
            try:
                self._frames = ScreenThumbnails(self._display)
            except ThumbnailError as error:
                self.problem = str(error)
                raise Unavailable(f"the X display is out of reach: {error}") from None
            self.problem = ""
        return self._frames

    def grab(self) -> np.ndarray:
        with self._lock:
            frames = self._ready()
            try:
                return frames.grab()
            except ThumbnailError as error:
                self._close()
                raise Unavailable(f"reading the screen failed: {error}") from None

    def screen_size(self) -> tuple[int, int]:
        with self._lock:
            frames = self._ready()
            try:
                return frames.screen_size()
            except ThumbnailError as error:
                self._close()
                raise Unavailable(f"reading the screen failed: {error}") from None

    def front_window(self) -> tuple[int, Bounds] | None:
        try:
            window = front_window(self._display)
        except ScreenshotUnavailable:
            return None
        return window.pid, Bounds(*window.area)

    def desk(self) -> XDesk | None:
        """The X server's windows now; None when the display cannot be read (the caller then goes by
        the accessibility tree alone, and its notes say so)."""
        with self._lock:
            try:
                if self._windows is None:
                    self._windows = XWindows(self._display)
                return self._windows.desk()
            except XWindowsError as error:
                self.problem = str(error)
                if self._windows is not None:
                    self._windows.close()
                    self._windows = None
                return None

    def close(self) -> None:
        with self._lock:
            self._close()
            if self._windows is not None:
                self._windows.close()
                self._windows = None

    def _close(self) -> None:
        if self._frames is not None:
            self._frames.close()
            self._frames = None
