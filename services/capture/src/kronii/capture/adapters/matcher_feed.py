"""What the matcher knows about the desktop: the focused window, the lock, the last input.

Fed by the sensor: its snapshot in Redis once at start (and again when asked), then its NATS events
(`kronii.activity.focus_changed`, `lock_changed`). Every focus change bumps `focus_seq`, so "a switch
happened after the request" (FocusNext) is a comparison of numbers. The last input time comes from the
snapshot's idle time (the X server's own input clock); the sensor's activity pulses are not used, since
it emits them on focus switches, which are exactly what a waiting job is waiting for.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import redis.asyncio as aioredis
from kronii.activity.v1 import activity_pb2 as apb
from kronii.capture.core.bypass import WindowFacts
from kronii.common import subjects
from kronii.common.bus import Bus
from kronii.common.rendezvous import SENSOR_SNAPSHOT_KEY
from nats.aio.subscription import Subscription

__all__ = ["SENSOR_SNAPSHOT_KEY", "DesktopView", "MatcherFeed", "facts_from_focus"]

log = logging.getLogger(__name__)


def facts_from_focus(focus: apb.Focus, focus_seq: int) -> WindowFacts | None:
    """The sensor's Focus as the core's WindowFacts; None when no window has the focus."""
    if not focus.window_id:
        return None
    return WindowFacts(
        pid=int(focus.pid),
        app_name=focus.app_name,
        app_start_time_ms=int(focus.app_start_time),
        window_id=int(focus.window_id),
        wm_class=focus.wm_class,
        title=focus.title,
        focus_seq=focus_seq,
    )


class DesktopView:
    """The matcher's picture of the desktop, changed only by MatcherFeed (and tests)."""

    def __init__(self) -> None:
        self.current: WindowFacts | None = None
        self.focus_seq = 0
        self.locked = False
        self.last_input_ms: int | None = None
        self.display_available = False
        self.snapshot_seen = False
        self.changed = asyncio.Event()

    def focus(self, focus: apb.Focus) -> None:
        self.focus_seq += 1
        self.current = facts_from_focus(focus, self.focus_seq)
        self._poke()

    def lock(self, locked: bool) -> None:
        self.locked = locked
        self._poke()

    def input_at(self, at_ms: int) -> None:
        self.last_input_ms = max(self.last_input_ms or 0, at_ms)

    def _poke(self) -> None:
        self.changed.set()


class MatcherFeed:
    def __init__(
        self, bus: Bus, redis: aioredis.Redis, view: DesktopView, *, clock: Callable[[], float] = time.time
    ) -> None:
        self._bus = bus
        self._redis = redis
        self.view = view
        self._clock = clock
        self._subscriptions: list[Subscription] = []

    async def start(self) -> None:
        await self.refresh_snapshot()
        self._subscriptions.append(await self._bus.subscribe(subjects.FOCUS_CHANGED, self._on_focus))
        self._subscriptions.append(await self._bus.subscribe(subjects.LOCK_CHANGED, self._on_lock))

    async def stop(self) -> None:
        for subscription in self._subscriptions:
            try:
                await subscription.unsubscribe()
            except Exception as error:  # the bus may already be gone at shutdown
                log.debug("unsubscribe failed: %s", error)
        self._subscriptions.clear()

    async def refresh_snapshot(self) -> bool:
        """Take the sensor's snapshot from Redis; False when there is none (no sensor yet)."""
        try:
            raw = await self._redis.get(SENSOR_SNAPSHOT_KEY)
        except Exception as error:
            log.warning("reading the sensor snapshot failed: %s", error)
            return False
        if raw is None:
            return False
        snapshot = apb.Snapshot()
        snapshot.ParseFromString(raw if isinstance(raw, bytes) else str(raw).encode())
        view = self.view
        seen = facts_from_focus(snapshot.focus, view.focus_seq)
        before = view.current
        if not view.snapshot_seen or _window_key(seen) != _window_key(before):
            # Only a different window counts as a switch; re-reading the same snapshot must not.
            if view.snapshot_seen:
                view.focus_seq += 1
            view.current = facts_from_focus(snapshot.focus, view.focus_seq)
        view.locked = snapshot.locked
        view.display_available = snapshot.display_available
        if snapshot.idle_ms or snapshot.HasField("updated_at"):
            updated_ms = snapshot.updated_at.ToMilliseconds() if snapshot.HasField("updated_at") else 0
            if updated_ms:
                view.input_at(updated_ms - int(snapshot.idle_ms))
        view.snapshot_seen = True
        view.changed.set()
        return True

    async def _on_focus(self, subject: str, message: apb.FocusChanged) -> None:
        self.view.focus(message.current)

    async def _on_lock(self, subject: str, message: apb.LockChanged) -> None:
        self.view.lock(message.locked)


def _window_key(facts: WindowFacts | None) -> tuple[int, int] | None:
    return None if facts is None else (facts.pid, facts.window_id)
