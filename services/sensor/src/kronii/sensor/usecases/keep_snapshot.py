"""The snapshot of the activity: made from the state machine after each change and each Tick, kept
in Redis where the other services read it, and answered from there (HTTP and gRPC alike)."""

from __future__ import annotations

import logging

from kronii.runtime.rendezvous import SENSOR_SNAPSHOT_KEY
from kronii.sensor.core.machine import SensorCore
from kronii.sensor.core.snapshot import SensorSnapshot, Transition, nanoseconds
from kronii.sensor.ports import SnapshotStore, StoreFailed, TitleCleaner
from kronii.sensor.usecases.watch_display import DisplayWatch

__all__ = ["KeepSnapshot"]

log = logging.getLogger(__name__)


class KeepSnapshot:
    def __init__(
        self, core: SensorCore, titles: TitleCleaner, display: DisplayWatch, store: SnapshotStore
    ) -> None:
        self._core = core
        self._titles = titles
        self._display = display
        self._store = store

    def current(self, now: float) -> SensorSnapshot:
        core = self._core
        change = core.last_transition
        return SensorSnapshot(
            state=core.state,
            focus=self._titles.clean(core.focus),
            idle_ms=core.idle_ms(now),
            locked=core.locked,
            updated_at_ns=nanoseconds(now),
            display_available=self._display.source is not None,
            prompt=core.prompt.prompt,
            last_transition=(
                Transition(change.from_state, change.to_state, nanoseconds(change.at))
                if change is not None
                else None
            ),
        )

    async def store(self, now: float) -> None:
        try:
            await self._store.keep(self.current(now))
        except StoreFailed as error:
            log.warning("storing the snapshot in Redis failed: %s", error)

    async def latest(self) -> SensorSnapshot:
        """The latest snapshot as kept in Redis; raises LookupError when there is none."""
        stored = await self._store.latest()
        if stored is None:
            raise LookupError(f"no snapshot in Redis under {SENSOR_SNAPSHOT_KEY}")
        return stored
