"""PipelineOperations over the stores a test gives (the rest unused), for the tests of the HTTP
routes, which now reach the stores through the facade."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, cast

from kronii.desktop.hold import DesktopHolds
from kronii.pipeline.metrics import PipelineMetrics
from kronii.pipeline.usecases.operations import PipelineOperations, PipelineStores
from kronii.pipeline.usecases.runner import Runner
from kronii.pipeline.usecases.show_notice import NoticeDesk
from prometheus_client import CollectorRegistry

from tests.unit.pipeline.runner_fakes import FakeAudit, FakeNotifier, Fakes


class WallClock:
    """A kronii.foundation.clock.Clock whose wall clock is the test's (epoch seconds)."""

    def __init__(self, wall: Callable[[], float]) -> None:
        self._wall = wall

    def wall(self) -> float:
        return self._wall()

    def monotonic(self) -> float:
        return self._wall()

    def wall_ms(self) -> int:
        return int(self._wall() * 1000)

    def monotonic_ms(self) -> int:
        return int(self._wall() * 1000)


class _Unused:
    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"this test gave no store for {name}")


def operations_over(
    *,
    runs: object = None,
    plugins: object = None,
    notifications: object = None,
    controls: object = None,
    stream: object = None,
    wall: Callable[[], float] = time.time,
) -> Callable[[], PipelineOperations]:
    clock = WallClock(wall)
    stores = PipelineStores(
        runs=cast(Any, runs or _Unused()),
        plugins=cast(Any, plugins or _Unused()),
        notifications=cast(Any, notifications or _Unused()),
        controls=cast(Any, controls or _Unused()),
        stream=cast(Any, stream or _Unused()),
    )
    runner = Runner(Fakes().ports(), clock)
    notices = NoticeDesk(FakeNotifier(), DesktopHolds, FakeAudit(), clock)
    operations = PipelineOperations(
        clock=clock,
        stores=stores,
        runner=runner,
        notices=notices,
        metrics=PipelineMetrics(CollectorRegistry()),
    )
    return lambda: operations
