"""The scheduler's rounds: expire what waited too long, pick what was queued, and run the best waiting
job whose window is focused now (core.bypass), one at a time (there is one screen), unless the user
is typing (input backoff)."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from kronii.capture.core.admission import RateLimits, input_backoff_ms
from kronii.capture.core.bypass import MatchParams, Readiness, readiness
from kronii.capture.core.status import JobEvent, expired
from kronii.capture.usecases.follow_desktop import DesktopView, FollowDesktop
from kronii.capture.usecases.run_capture import RunCapture
from kronii.capture.usecases.track_jobs import JobBoard
from kronii.foundation.clock import Clock

__all__ = ["JobScheduler"]

log = logging.getLogger(__name__)

# The snapshot holds the idle time (input backoff) and heals a missed focus event; not more often.
_SNAPSHOT_EVERY_S = 0.5


class JobScheduler:
    def __init__(
        self,
        board: JobBoard,
        run: RunCapture,
        view: DesktopView,
        desktop: FollowDesktop | None,
        clock: Clock,
        *,
        limits: RateLimits,
        match: MatchParams,
        interval_ms: int,
    ) -> None:
        self._board = board
        self._run = run
        self._view = view
        self._desktop = desktop
        self._clock = clock
        self._limits = limits
        self._match = match
        self._interval_s = interval_ms / 1000
        self._last_snapshot = 0.0

    async def loop(self) -> None:
        """Rounds until cancelled: on every desktop change, and at least every interval."""
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._view.changed.wait(), self._interval_s)
            self._view.changed.clear()
            try:
                await self.round()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("the capture scheduler failed a round")

    async def round(self) -> None:
        await self._expire_due()
        await self._board.pick_queued()
        if (
            self._board.waiting()
            and self._clock.monotonic() - self._last_snapshot > _SNAPSHOT_EVERY_S
            and self._desktop is not None
        ):
            self._last_snapshot = self._clock.monotonic()
            await self._desktop.refresh_snapshot()
        job_id = self.next_ready()
        if job_id:
            facts = self._view.current
            assert facts is not None
            await self._run.run(job_id, facts)

    async def _expire_due(self) -> None:
        moment = self._clock.wall_ms()
        for stored in self._board.live_jobs():
            if expired(stored.record, moment):
                await self._board.transition(
                    stored.record.job_id,
                    JobEvent.TTL_ELAPSED,
                    f"the window did not match within {stored.record.spec.ttl_ms} ms",
                )

    def next_ready(self) -> str:
        """The best waiting job whose window is focused now, unless the user is typing (backoff)."""
        current = self._view.current
        for stored in self._board.waiting():
            verdict = readiness(
                stored.record.spec,
                current,
                enqueued_focus_seq=stored.enqueued_focus_seq,
                locked=self._view.locked,
                params=self._match,
            )
            if verdict is Readiness.READY:
                if input_backoff_ms(self._view.last_input_ms, self._clock.wall_ms(), self._limits) > 0:
                    return ""
                return stored.record.job_id
        return ""
