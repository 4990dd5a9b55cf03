"""A focus on no window waits a grace before the sensor takes it: window managers pass through "no
window" while they switch (openbox on every activation, KWin while a window maps), and a switch is one
FocusChanged, not two with nothing between. Focus lost for longer is still reported, at the grace's
end. TakeActivity in process with the real state machine and PublishActivity."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any, cast

from kronii.foundation.clock import ManualClock
from kronii.sensor.core.machine import SensorCore
from kronii.sensor.core.model import Focus, FocusChanged
from kronii.sensor.core.params import SensorParams
from kronii.sensor.core.snapshot import ActivityEvent
from kronii.sensor.metrics import SensorMetrics
from kronii.sensor.usecases.keep_snapshot import KeepSnapshot
from kronii.sensor.usecases.publish_activity import PublishActivity
from kronii.sensor.usecases.record_activity import RecordActivity
from kronii.sensor.usecases.take_activity import TakeActivity
from kronii.sensor.usecases.watch_activity import ActivityFeed
from kronii.sensor.usecases.watch_display import DisplayWatch
from prometheus_client import CollectorRegistry

from tests.unit.sensor.test_sensor_snapshot_on_change import CountingStore, PlainTitles

START = 1_796_000_000.0
GRACE_SECS = 0.05
XTERM = Focus(app_name="XTerm", wm_class="xterm.XTerm", window_id=11, title="notes")
EDITOR = Focus(app_name="gedit", wm_class="gedit.Gedit", window_id=12, title="draft")
NO_WINDOW = Focus()


class FocusLog:
    def __init__(self) -> None:
        self.apps: list[str] = []

    async def publish(self, kind: str, event: ActivityEvent) -> None:
        if isinstance(event, FocusChanged):
            self.apps.append(event.current.app_name or "(no window)")


async def _no_audit(**fields: str) -> None:
    return None


def _take(log: FocusLog) -> TakeActivity:
    clock = ManualClock(START)
    core = SensorCore(SensorParams(), START)
    metrics = SensorMetrics(cast(Any, SimpleNamespace(registry=CollectorRegistry())))
    display = DisplayWatch(lambda _name: cast(Any, None), metrics)
    snapshot = KeepSnapshot(core, PlainTitles(), display, CountingStore())
    record = RecordActivity(None, _no_audit)
    publish = PublishActivity(core, PlainTitles(), log, ActivityFeed(), record, metrics, clock)
    return TakeActivity(core, publish, snapshot, display, clock, no_window_grace_secs=GRACE_SECS)


async def _xterm_then_no_window(take: TakeActivity) -> None:
    """XTerm focused and taken, then the focus on no window, a fifth of the grace ago."""
    take.focus_seen(XTERM, 0.0)
    await asyncio.sleep(GRACE_SECS * 2)
    take.focus_seen(NO_WINDOW, 0.0)
    await asyncio.sleep(GRACE_SECS / 5)


def test_a_switch_through_no_window_within_the_grace_is_one_focus_change() -> None:
    async def scenario() -> None:
        log = FocusLog()
        take = _take(log)
        runner = asyncio.create_task(take.run())
        await _xterm_then_no_window(take)  # the window manager lets go of the old window...
        take.focus_seen(EDITOR, 0.0)  # ...and focuses the new one
        await asyncio.sleep(GRACE_SECS * 3)
        runner.cancel()
        assert log.apps == ["XTerm", "gedit"]

    asyncio.run(scenario())


def test_focus_on_no_window_for_longer_than_the_grace_is_reported_when_it_ends() -> None:
    async def scenario() -> None:
        log = FocusLog()
        take = _take(log)
        runner = asyncio.create_task(take.run())
        await _xterm_then_no_window(take)  # the last window closed
        assert log.apps == ["XTerm"], "no window was taken before the grace ended"
        await asyncio.sleep(GRACE_SECS * 3)
        take.focus_seen(EDITOR, 0.0)
        await asyncio.sleep(GRACE_SECS)
        runner.cancel()
        assert log.apps == ["XTerm", "(no window)", "gedit"]

    asyncio.run(scenario())
