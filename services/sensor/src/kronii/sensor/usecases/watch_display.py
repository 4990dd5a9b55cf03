"""The display the sensor follows (X11, or a Wayland compositor), or none: opened at start, asked for
idle time on each Tick, given up when it goes away (the sensor then runs on Tick alone, and /readyz says
why). A display that cannot tell everything (a compositor without a window list) is kept for what it can
tell, and /readyz says what it cannot.

A display that tells the idle time by events (X11's SYNC alarms, a compositor's idle notices) answers
it from memory, on the loop; one that does not (mutter's bus call, an X server without SYNC) is asked
off the loop at each Tick, and the sensor says so once."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from kronii.sensor.core.model import Focus
from kronii.sensor.metrics import SensorMetrics
from kronii.sensor.ports import DisplaySource, DisplayUnavailable, IdleUnavailable

__all__ = ["DisplayWatch"]

log = logging.getLogger(__name__)


class DisplayWatch:
    def __init__(self, open_display: Callable[[str], DisplaySource], metrics: SensorMetrics) -> None:
        self._open_display = open_display
        self._metrics = metrics
        self.source: DisplaySource | None = None
        self.problem = ""
        self.idle_events = False
        self._errors_seen = 0

    def open(self, name: str | None, why_none: str = "DISPLAY is not set") -> None:
        """Open the display `name`; without one, say why (`why_none`) and go on with Tick alone."""
        if not name:
            self.problem = f"no display: {why_none}; the sensor runs on Tick alone"
            log.warning("%s", self.problem)
            return
        try:
            display = self._open_display(name)
        except DisplayUnavailable as error:
            self.problem = f"no display: {error}; the sensor runs on Tick alone"
            log.warning("%s", self.problem)
            return
        if display.problem:
            log.warning("%s: %s", display.display_name, display.problem)
        self.problem = display.problem
        self.source = display

    def watch_idle(self, on_idle: Callable[[int], None]) -> None:
        """Ask the display for idle events (before `start`); without them, say once that it is polled."""
        source = self.source
        if source is None:
            return
        self.idle_events = source.watch_idle(on_idle)
        if self.idle_events or source.problem:
            return
        if source.has_idle:
            log.info("%s tells no idle events: its idle time is asked at each tick", source.display_name)
        else:
            log.warning(
                "the X display has neither SYNC's IDLETIME nor MIT-SCREEN-SAVER: idle time comes from focus events only"
            )

    def start(self, on_focus: Callable[[Focus], None]) -> None:
        if self.source is not None:
            self.source.start(on_focus)

    def read_idle(self) -> int | None:
        """The idle time at start (blocking, once)."""
        if self.source is None or not self.source.has_idle:
            return None
        try:
            return self.source.idle_ms()
        except (DisplayUnavailable, IdleUnavailable) as error:
            log.warning("reading idle time failed: %s", error)
            return None

    async def idle_now(self) -> int | None:
        display = self.source
        if display is None or not display.has_idle:
            return None
        try:
            # From memory when the display tells idle by events: no thread, no round trip.
            return display.idle_ms() if self.idle_events else await asyncio.to_thread(display.idle_ms)
        except IdleUnavailable:
            return None
        except DisplayUnavailable as error:
            # The X server went away: say so once, report it in /readyz, and go on with Tick alone.
            self.problem = f"lost the display: {error}; the sensor runs on Tick alone"
            log.warning("%s", self.problem)
            self.source = None
            with contextlib.suppress(Exception):
                await asyncio.to_thread(display.close)
            return None

    def count_errors(self) -> None:
        """Add the display's asynchronous errors seen since the last count to the metric."""
        if self.source is None:
            return
        errors = self.source.errors
        if errors > self._errors_seen:
            self._metrics.x11_errors.inc(errors - self._errors_seen)
            self._errors_seen = errors

    async def close(self) -> None:
        if self.source is not None:
            await asyncio.to_thread(self.source.close)
