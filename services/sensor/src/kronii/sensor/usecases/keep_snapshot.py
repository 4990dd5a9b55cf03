"""The snapshot of the activity: made from the state machine after each input, kept in Redis where the
other services read it when it changed, and answered from there (HTTP and gRPC alike).

Changed means anything but the time: the state, the focus (title redacted), the lock, the prompt, the
last transition, the display, or the time of the last input (so `updated_at - idle_ms` in the stored
snapshot is always the person's last input, to within the idle time's precision). A snapshot that
stays the same is written again every `refresh_secs` only, so a reader can tell a live sensor."""

from __future__ import annotations

import logging
from dataclasses import replace

from kronii.runtime.rendezvous import SENSOR_SNAPSHOT_KEY
from kronii.sensor.core.machine import SensorCore
from kronii.sensor.core.snapshot import SensorSnapshot, Transition, nanoseconds
from kronii.sensor.ports import SnapshotStore, StoreFailed, TitleCleaner
from kronii.sensor.usecases.watch_display import DisplayWatch

__all__ = ["KeepSnapshot"]

log = logging.getLogger(__name__)


class KeepSnapshot:
    def __init__(
        self,
        core: SensorCore,
        titles: TitleCleaner,
        display: DisplayWatch,
        store: SnapshotStore,
        refresh_secs: float = 30.0,
    ) -> None:
        self._core = core
        self._titles = titles
        self._display = display
        self._store = store
        self._refresh_secs = refresh_secs
        self._kept: tuple[SensorSnapshot, float] | None = None
        self._kept_at = 0.0

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

    async def write(self, now: float) -> None:
        """Write the snapshot now, changed or not (at start)."""
        snapshot = self.current(now)
        try:
            await self._store.keep(snapshot)
        except StoreFailed as error:
            log.warning("storing the snapshot in Redis failed: %s", error)
            return
        self._kept, self._kept_at = self._timeless(snapshot), now

    async def store(self, now: float) -> bool:
        """Write the snapshot if it changed, or if the one kept is `refresh_secs` old; whether it was."""
        if self._kept == self._timeless(self.current(now)) and now - self._kept_at < self._refresh_secs:
            return False
        await self.write(now)
        return True

    def _timeless(self, snapshot: SensorSnapshot) -> tuple[SensorSnapshot, float]:
        """The snapshot without its time, and the last input's (which its idle time is counted from:
        taken from the core, as the idle time in whole milliseconds would jitter with the clock)."""
        return replace(snapshot, updated_at_ns=0, idle_ms=0), self._core.last_input_at

    async def latest(self) -> SensorSnapshot:
        """The latest snapshot as kept in Redis; raises LookupError when there is none."""
        stored = await self._store.latest()
        if stored is None:
            raise LookupError(f"no snapshot in Redis under {SENSOR_SNAPSHOT_KEY}")
        return stored
