"""Watching the screen while a plan waits (R1 and the cadence): ticks come only while a plan is
active, every 0.5-2 s by the CPU the ticks themselves cost. A tick compares a reduced frame with the
last one; under R1's threshold and without a focus change (the sensor's events) nothing else happens,
no context, no model. Only the waiting plans' windows are compared, less what is drawn over them that
is not the application's (kronii's own confirmation bubble, which appears just as a plan starts
waiting). A changed screen makes the waiting plans stale: each is planned again (at most
`max_replans` times in a row) and the person is asked about the new one."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from kronii.foundation.clock import Clock
from kronii.vision.core.fingerprint import watched_diff
from kronii.vision.core.front import XDesk
from kronii.vision.core.gate import Cadence, should_call_model
from kronii.vision.core.plan_book import PlanBook
from kronii.vision.core.plans import PlanEvent, PlanState
from kronii.vision.usecases.build_context import ContextBuilder
from kronii.vision.usecases.make_plan import Replanner

if TYPE_CHECKING:
    import numpy as np

__all__ = ["ScreenWatch"]

log = logging.getLogger(__name__)


class ScreenWatch:
    def __init__(
        self,
        book: PlanBook,
        builder: ContextBuilder,
        replanner: Replanner,
        clock: Clock,
        cadence: Cadence,
        *,
        max_replans: int = 2,
        observe: Callable[[str], None] = lambda decision: None,
    ) -> None:
        self._book = book
        self._builder = builder
        self._replanner = replanner
        self._clock = clock
        self._cadence = cadence
        self._max_replans = max_replans
        self._observe = observe
        self._focus_changed = False
        self._last: np.ndarray | None = None
        self._last_desk: XDesk | None = None
        self._cpu_share = 0.0
        self._replans: dict[str, int] = {}
        self.ticks = {"skipped": 0, "changed": 0}

    def focus_changed(self) -> None:
        """The sensor saw the focus move (FocusChanged on NATS): the next tick is not skipped."""
        self._focus_changed = True

    def _waiting(self) -> list[str]:
        return [p.id for p in self._book.active() if p.state is PlanState.AWAITING_CONFIRMATION]

    async def run(self) -> None:
        while True:
            self._book.expire(self._clock.wall_ms())
            interval = self._cadence.interval(bool(self._book.active()), self._cpu_share)
            if interval is None:
                self._last = None  # nothing watched: the next plan starts from a fresh frame
                await asyncio.sleep(self._cadence.slowest_secs)
                continue
            await asyncio.sleep(interval)
            started_cpu, started = time.thread_time() + time.process_time(), time.monotonic()
            try:
                await self.tick()
            except Exception:
                log.exception("vision: a screen tick failed; the next one tries again")
            spent = time.thread_time() + time.process_time() - started_cpu
            self._cpu_share = min(1.0, spent / max(interval + time.monotonic() - started, 1e-3))

    async def tick(self) -> str:
        """One look at the screen: "skipped" (R1: same screen, no focus change) or "changed". The
        pixels compared are the waiting plans' windows', less what kronii drew over them."""
        frame, desk = await self._builder.watch_look()
        if self._last is None:
            self._last, self._last_desk = frame, desk
            return self._count("skipped")
        windows = [self._book.get(plan_id).context.window for plan_id in self._waiting()]
        diff = watched_diff(self._last, self._last_desk, frame, desk, windows)
        focus, self._focus_changed = self._focus_changed, False
        self._last, self._last_desk = frame, desk
        if not should_call_model(diff, focus):
            return self._count("skipped")
        reason = "the focus moved" if focus else f"the screen changed (pixel difference {diff:.3f})"
        for plan_id in self._waiting():
            await self._stale(plan_id, reason)
        return self._count("changed")

    def _count(self, decision: str) -> str:
        self.ticks[decision] += 1
        self._observe(decision)
        return decision

    async def _stale(self, plan_id: str, reason: str) -> None:
        record = self._book.get(plan_id)
        self._book.move(record, PlanEvent.SCREEN_CHANGED, self._clock.wall_ms(), reason)
        rounds = self._replans.pop(plan_id, 0)
        if rounds >= self._max_replans:
            return
        again = await self._replanner.replan(record, reason)
        if again is not None:
            record.replanned_as = again.id
            self._replans[again.id] = rounds + 1
