"""What the matcher knows about the desktop: the focused window, the lock, the last input.

Fed by the sensor: its snapshot (ports.SensorSnapshots) once at start and again when a scheduler
round asks, and its focus and lock events (api.bus hands them here through the operations). Every
focus change bumps `focus_seq`, so "a switch happened after the request" (FocusNext) is a comparison
of numbers. The two feeds race: an event can arrive after a snapshot that already showed its window,
and a snapshot read from the store can be older than the last event. Neither is a switch: an event
naming the window the view already has changes nothing, and a snapshot written before the last focus
event followed says nothing about the focus. The last input time comes from the snapshot's idle time (the X server's own input
clock); the sensor's activity pulses are not used, since it emits them on focus switches, which are
exactly what a waiting job is waiting for.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace

from kronii.capture.core.bypass import WindowFacts
from kronii.capture.core.desktop import SensorSnapshot
from kronii.capture.ports import SensorSnapshots, SnapshotUnavailable

__all__ = ["DesktopView", "FollowDesktop"]

log = logging.getLogger(__name__)


class DesktopView:
    """The matcher's picture of the desktop, changed only through its methods (by FollowDesktop, and
    by tests); the use cases that match jobs read it and wake the scheduler with `poke`."""

    def __init__(self) -> None:
        self.current: WindowFacts | None = None
        self.focus_seq = 0
        self.locked = False
        self.last_input_ms: int | None = None
        self.display_available = False
        self.snapshot_seen = False
        self.changed = asyncio.Event()
        self._focus_event_at_ms: int | None = None

    def focus(self, facts: WindowFacts | None, at_ms: int | None = None) -> None:
        """A focus switch to `facts` (None: no window has the focus) the sensor saw at `at_ms`."""
        if at_ms is not None:
            self._focus_event_at_ms = max(self._focus_event_at_ms or 0, at_ms)
        if _window_key(facts) == _window_key(self.current) and (self.snapshot_seen or self.focus_seq):
            return
        self.focus_seq += 1
        self.current = None if facts is None else replace(facts, focus_seq=self.focus_seq)
        self.poke()

    def lock(self, locked: bool) -> None:
        self.locked = locked
        self.poke()

    def input_at(self, at_ms: int) -> None:
        self.last_input_ms = max(self.last_input_ms or 0, at_ms)

    def take_snapshot(self, snapshot: SensorSnapshot) -> None:
        """The sensor's snapshot: only a different window than the one seen counts as a switch
        (re-reading the same snapshot must not)."""
        if self._follows_focus(snapshot) and (
            not self.snapshot_seen or _window_key(snapshot.focus) != _window_key(self.current)
        ):
            if self.snapshot_seen or self.focus_seq:
                self.focus_seq += 1
            focus = snapshot.focus
            self.current = None if focus is None else replace(focus, focus_seq=self.focus_seq)
        self.locked = snapshot.locked
        self.display_available = snapshot.display_available
        if snapshot.input_at_ms is not None:
            self.input_at(snapshot.input_at_ms)
        self.snapshot_seen = True
        self.poke()

    def _follows_focus(self, snapshot: SensorSnapshot) -> bool:
        written, followed = snapshot.updated_at_ms, self._focus_event_at_ms
        return written is None or followed is None or written >= followed

    def poke(self) -> None:
        """Wake the scheduler: something it matches on changed."""
        self.changed.set()


class FollowDesktop:
    """Keeps the view in step with the sensor."""

    def __init__(self, view: DesktopView, snapshots: SensorSnapshots) -> None:
        self.view = view
        self._snapshots = snapshots

    async def refresh_snapshot(self) -> bool:
        """Take the sensor's snapshot; False when there is none (no sensor yet) or its store failed."""
        try:
            snapshot = await self._snapshots.read()
        except SnapshotUnavailable as error:
            log.warning("reading the sensor snapshot failed: %s", error)
            return False
        if snapshot is None:
            return False
        self.view.take_snapshot(snapshot)
        return True

    def focus_changed(self, facts: WindowFacts | None, at_ms: int | None = None) -> None:
        self.view.focus(facts, at_ms)

    def lock_changed(self, locked: bool) -> None:
        self.view.lock(locked)


def _window_key(facts: WindowFacts | None) -> tuple[int, int] | None:
    return None if facts is None else (facts.pid, facts.window_id)
