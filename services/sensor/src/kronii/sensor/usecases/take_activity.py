"""Take what the sensor sees (focus from the display's thread, lock signals, a Tick with the idle
time, input coming back as the display's idle events tell it) into the state machine, one input at
a time, and carry out what it decides; the snapshot is kept when it changed (keep_snapshot), and the
activity history sees each Tick and each change of state, focus or lock (a title alone is sampled by
the Tick). Inputs are stamped on arrival: their time on the wall clock (the core's), their arrival
on the monotonic clock (the focus latency).

The Tick is the state machine's clock (grace and idle thresholds) and the history's sampler; with a
display that tells idle by events it costs no I/O and no thread: the idle time is read from memory.

A focus on no window waits `no_window_grace_secs` before it is taken: window managers pass through it
while they switch (openbox on every activation, KWin while a new window maps), and a window focused
within the grace replaces it, so a switch is one focus change, not two with "nothing" between. Focus
lost for longer (the last window closed, the desktop clicked) is taken at the end of the grace."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from kronii.foundation.clock import Clock
from kronii.sensor.core.machine import SensorCore
from kronii.sensor.core.model import (
    Effect,
    Focus,
    FocusChanged,
    FocusObserved,
    LockEnd,
    LockRecorded,
    LockStart,
    SensorInput,
    StateChanged,
    Tick,
)
from kronii.sensor.usecases.keep_snapshot import KeepSnapshot
from kronii.sensor.usecases.keep_spans import KeepSpans
from kronii.sensor.usecases.publish_activity import PublishActivity
from kronii.sensor.usecases.watch_display import DisplayWatch

__all__ = ["TakeActivity"]

log = logging.getLogger(__name__)

_QUEUE = 10_000
NO_WINDOW_GRACE_SECS = 0.3


class TakeActivity:
    def __init__(
        self,
        core: SensorCore,
        publish: PublishActivity,
        snapshot: KeepSnapshot,
        display: DisplayWatch,
        clock: Clock,
        spans: KeepSpans | None = None,
        no_window_grace_secs: float = NO_WINDOW_GRACE_SECS,
    ) -> None:
        self._core = core
        self._publish = publish
        self._snapshot = snapshot
        self._display = display
        self._clock = clock
        self._spans = spans
        self._no_window_grace_secs = no_window_grace_secs
        self._no_window: asyncio.TimerHandle | None = None
        self._inputs: asyncio.Queue[tuple[SensorInput, float]] = asyncio.Queue(maxsize=_QUEUE)

    def offer(self, event: SensorInput, received: float) -> None:
        try:
            self._inputs.put_nowait((event, received))
        except asyncio.QueueFull:
            log.warning("sensor input queue is full; dropping %s", type(event).__name__)

    def focus_from_thread(self, loop: asyncio.AbstractEventLoop) -> Callable[[Focus], None]:
        """The display watcher's callback: it runs on the watcher's thread and hands the focus over
        to `loop`, stamped on arrival."""

        def on_focus(focus_seen: Focus) -> None:
            loop.call_soon_threadsafe(self.focus_seen, focus_seen, self._clock.monotonic())

        return on_focus

    def focus_seen(self, focus: Focus, received: float) -> None:
        """A focus the display reported (on the loop): a window's at once; no window after the grace,
        unless a window is focused before it ends."""
        if self._no_window is not None:
            self._no_window.cancel()
            self._no_window = None
        if focus.window_id:
            self.offer(FocusObserved(self._clock.wall(), focus), received)
            return
        self._no_window = asyncio.get_running_loop().call_later(
            self._no_window_grace_secs, self._no_window_stands, focus
        )

    def _no_window_stands(self, focus: Focus) -> None:
        """Stamped when the grace ends: the inputs stay in the order of their times."""
        self._no_window = None
        self.offer(FocusObserved(self._clock.wall(), focus), self._clock.monotonic())

    def idle_from_thread(self, loop: asyncio.AbstractEventLoop) -> Callable[[int], None]:
        """The display's idle callback (input came back): a Tick at once, with the idle time the
        display saw, so the return to Active does not wait for the next Tick."""

        def on_idle(idle_ms: int) -> None:
            loop.call_soon_threadsafe(self.offer, Tick(self._clock.wall(), idle_ms), self._clock.monotonic())

        return on_idle

    def on_lock(self, locked: bool, source: str) -> None:
        at = self._clock.wall()
        event: SensorInput = LockStart(at, source) if locked else LockEnd(at, source)
        self.offer(event, self._clock.monotonic())

    async def tick_forever(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            idle = await self._display.idle_now()
            self.offer(Tick(self._clock.wall(), idle), self._clock.monotonic())

    async def run(self) -> None:
        """Handle the inputs in arrival order, forever."""
        while True:
            event, received = await self._inputs.get()
            try:
                effects = self._core.handle(event)
                for effect in effects:
                    await self._publish(effect, received)
                await self._snapshot.store(self._clock.wall())
                if self._spans is not None and (isinstance(event, Tick) or _bounds_a_span(effects)):
                    core = self._core
                    self._spans.observe(event.at, core.state, core.focus, core.locked)
                self._display.count_errors()
            except Exception:
                log.exception("handling %s failed", type(event).__name__)


def _bounds_a_span(effects: list[Effect]) -> bool:
    """A state change, a focus change or a lock starts a span at its own time; anything else (a
    title rewritten many times a second) is sampled by the next Tick, as ActivityWatch polls it."""
    return any(isinstance(effect, StateChanged | FocusChanged | LockRecorded) for effect in effects)
