"""DisplayWatch's idle reads, in process: a display that tells idle by events (X11's SYNC alarms, a
compositor's notices) is read on the loop's own thread, with no worker thread per Tick; one that does
not (mutter's bus call, an X server without SYNC) is asked off the loop, and the sensor says so once."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, cast

import pytest
from kronii.sensor.core.model import Focus
from kronii.sensor.metrics import SensorMetrics
from kronii.sensor.usecases.watch_display import DisplayWatch
from prometheus_client import CollectorRegistry


class RecordingDisplay:
    """A DisplaySource that answers a fixed idle time and notes the thread each read ran on."""

    def __init__(self, tells_idle_by_events: bool) -> None:
        self.display_name = "test display"
        self.problem = ""
        self.errors = 0
        self.has_idle = True
        self.read_on: list[int] = []
        self.on_idle: Callable[[int], None] | None = None
        self._events = tells_idle_by_events

    def idle_ms(self) -> int:
        self.read_on.append(threading.get_ident())
        return 4200

    def watch_idle(self, on_idle: Callable[[int], None]) -> bool:
        if self._events:
            self.on_idle = on_idle
        return self._events

    def start(self, callback: Callable[[Focus], None]) -> None:
        return None

    def close(self) -> None:
        return None


def _watch(display: RecordingDisplay) -> DisplayWatch:
    metrics = SensorMetrics(cast(Any, SimpleNamespace(registry=CollectorRegistry())))
    watch = DisplayWatch(lambda _name: cast(Any, display), metrics)
    watch.open(display.display_name)
    return watch


def _read_idle_three_times(watch: DisplayWatch) -> tuple[list[int | None], int]:
    async def run() -> tuple[list[int | None], int]:
        return [await watch.idle_now() for _ in range(3)], threading.get_ident()

    return asyncio.run(run())


def test_a_display_with_idle_events_is_read_on_the_loop_thread_without_a_worker() -> None:
    display = RecordingDisplay(tells_idle_by_events=True)
    watch = _watch(display)
    watch.watch_idle(lambda _idle_ms: None)
    assert watch.idle_events is True
    assert display.on_idle is not None  # the display was handed the callback for input coming back

    values, loop_thread = _read_idle_three_times(watch)

    assert values == [4200, 4200, 4200]
    assert display.read_on == [loop_thread] * 3


def test_a_display_without_idle_events_is_asked_off_the_loop_and_said_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    display = RecordingDisplay(tells_idle_by_events=False)
    watch = _watch(display)
    with caplog.at_level(logging.INFO, logger="kronii.sensor.usecases.watch_display"):
        watch.watch_idle(lambda _idle_ms: None)
        values, loop_thread = _read_idle_three_times(watch)

    assert watch.idle_events is False
    assert values == [4200, 4200, 4200]
    assert loop_thread not in display.read_on
    said = [record for record in caplog.records if "tells no idle events" in record.getMessage()]
    assert len(said) == 1
