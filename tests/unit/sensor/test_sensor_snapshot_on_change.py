"""TakeActivity in process with the real state machine, KeepSnapshot and PublishActivity, a ManualClock
and an in-memory snapshot store: Ticks that change nothing write no snapshot; a change writes one at
once; a snapshot that stays the same is written again after `refresh_secs`; and the stored snapshot's
`updated_at - idle_ms` is the person's last input."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any, cast

from kronii.foundation.clock import ManualClock
from kronii.sensor.core.machine import SensorCore
from kronii.sensor.core.model import ActivityState, Focus, FocusObserved, Tick
from kronii.sensor.core.params import SensorParams
from kronii.sensor.core.snapshot import ActivityEvent, SensorSnapshot
from kronii.sensor.metrics import SensorMetrics
from kronii.sensor.usecases.keep_snapshot import KeepSnapshot
from kronii.sensor.usecases.publish_activity import PublishActivity
from kronii.sensor.usecases.record_activity import RecordActivity
from kronii.sensor.usecases.take_activity import TakeActivity
from kronii.sensor.usecases.watch_activity import ActivityFeed
from kronii.sensor.usecases.watch_display import DisplayWatch
from prometheus_client import CollectorRegistry

START = 1_796_000_000.0
REFRESH_SECS = 20.0
XTERM = Focus(app_name="XTerm", wm_class="xterm.XTerm", window_id=11, title="notes")


class CountingStore:
    def __init__(self) -> None:
        self.kept: list[SensorSnapshot] = []

    async def keep(self, snapshot: SensorSnapshot) -> None:
        self.kept.append(snapshot)

    async def latest(self) -> SensorSnapshot | None:
        return self.kept[-1] if self.kept else None


class PlainTitles:
    def clean(self, focus: Focus) -> Focus:
        return focus


class QuietBus:
    async def publish(self, kind: str, event: ActivityEvent) -> None:
        return None


async def _no_audit(**fields: str) -> None:
    return None


class Sensor:
    """The sensor's event path as app.py wires it, without a display (idle comes in the Ticks)."""

    def __init__(self) -> None:
        self.clock = ManualClock(START)
        self.store = CountingStore()
        self.core = SensorCore(SensorParams(active_grace_secs=30, idle_threshold_secs=300), START)
        metrics = SensorMetrics(cast(Any, SimpleNamespace(registry=CollectorRegistry())))
        display = DisplayWatch(lambda _name: cast(Any, None), metrics)
        titles = PlainTitles()
        self.snapshot = KeepSnapshot(self.core, titles, display, self.store, REFRESH_SECS)
        record = RecordActivity(None, _no_audit)
        publish = PublishActivity(self.core, titles, QuietBus(), ActivityFeed(), record, metrics, self.clock)
        self.take = TakeActivity(self.core, publish, self.snapshot, display, self.clock)

    async def tick(self, seconds: float, idle_ms: int | None) -> None:
        """The clock moves on `seconds`, then a Tick as the display's idle time says it."""
        self.clock.advance(seconds)
        await self.feed(Tick(self.clock.wall(), idle_ms))

    async def feed(self, event: Tick | FocusObserved) -> None:
        self.take.offer(event, self.clock.monotonic())
        while not self.take._inputs.empty():  # the queue drained: every input handled
            await asyncio.sleep(0)
        await asyncio.sleep(0)


def _scenario(steps: Any) -> None:
    async def run() -> None:
        sensor = Sensor()
        worker = asyncio.create_task(sensor.take.run())
        try:
            await steps(sensor)
        finally:
            worker.cancel()

    asyncio.run(run())


def test_ticks_that_change_nothing_store_no_snapshot() -> None:
    async def steps(sensor: Sensor) -> None:
        # The person went still at START: the display's idle time grows with the clock.
        for n in range(1, 11):
            await sensor.tick(1.0, idle_ms=n * 1000)
        assert len(sensor.store.kept) == 1  # the first Tick's (there was none), none for the next nine
        assert sensor.core.state is ActivityState.ACTIVE

    _scenario(steps)


def test_a_focus_change_stores_the_snapshot_at_once_and_the_next_ticks_do_not() -> None:
    async def steps(sensor: Sensor) -> None:
        await sensor.tick(1.0, idle_ms=1000)
        await sensor.feed(FocusObserved(sensor.clock.wall(), XTERM))
        assert len(sensor.store.kept) == 2
        assert sensor.store.kept[-1].focus == XTERM
        for _ in range(5):
            await sensor.tick(1.0, idle_ms=None)
        assert len(sensor.store.kept) == 2

    _scenario(steps)


def test_input_the_display_saw_is_stored_and_updated_minus_idle_is_that_input() -> None:
    async def steps(sensor: Sensor) -> None:
        await sensor.tick(5.0, idle_ms=5000)
        await sensor.tick(1.0, idle_ms=0)  # a key at START + 6
        assert len(sensor.store.kept) == 2
        kept = sensor.store.kept[-1]
        assert kept.updated_at_ns - kept.idle_ms * 1_000_000 == int((START + 6) * 1e9)
        for n in range(1, 4):
            await sensor.tick(1.0, idle_ms=n * 1000)
        assert len(sensor.store.kept) == 2

    _scenario(steps)


def test_a_snapshot_that_stays_the_same_is_written_again_after_the_refresh_interval() -> None:
    async def steps(sensor: Sensor) -> None:
        for _ in range(20):  # the first at START + 1 is stored, the next 19 are the same
            await sensor.tick(1.0, idle_ms=None)
        assert len(sensor.store.kept) == 1
        await sensor.tick(1.0, idle_ms=None)  # START + 21: the one kept is 20 s old
        assert len(sensor.store.kept) == 2
        assert sensor.store.kept[-1].updated_at_ns == int((START + 1 + REFRESH_SECS) * 1e9)

    _scenario(steps)


def test_the_grace_elapsing_is_a_change_and_is_stored() -> None:
    async def steps(sensor: Sensor) -> None:
        for n in range(1, 31):
            await sensor.tick(1.0, idle_ms=n * 1000)
        assert sensor.core.state is ActivityState.PASSIVE
        assert sensor.store.kept[-1].state is ActivityState.PASSIVE
        # The first Tick's, the refresh at 21 s, then the change at 30 s.
        assert [kept.updated_at_ns for kept in sensor.store.kept] == [
            int((START + at) * 1e9) for at in (1, 21, 30)
        ]

    _scenario(steps)


def test_ticks_at_uneven_times_store_nothing_though_the_idle_time_is_in_whole_milliseconds() -> None:
    async def steps(sensor: Sensor) -> None:
        for _ in range(12):  # 0.3337 s apart: the idle time's truncation differs at each Tick
            await sensor.tick(0.3337, idle_ms=None)
        assert len(sensor.store.kept) == 1

    _scenario(steps)
