"""What the sensor's app needs of its adapters: the display (focus and idle), the lock signals, the
snapshot store and the event store. `adapters/` implements them; fakes in tests may stand in."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from kronii.activity.v1 import activity_pb2 as pb
from kronii.sensor.core.model import Focus

__all__ = ["DisplaySource", "EventStore", "LockSignals", "SnapshotStore"]


class DisplaySource(Protocol):
    """One X display: the focused window as it changes, and the user's idle time."""

    display_name: str

    @property
    def has_idle(self) -> bool:
        """Whether idle time can be read (the MIT-SCREEN-SAVER extension)."""
        ...

    @property
    def errors(self) -> int:
        """How many asynchronous display errors were seen so far."""
        ...

    def idle_ms(self) -> int:
        """Milliseconds since the last input; blocks, so the app calls it off the loop."""
        ...

    def start(self, callback: Callable[[Focus], None]) -> None:
        """Watch focus changes; `callback` runs on the watcher's own thread."""
        ...

    def close(self) -> None: ...


class LockSignals(Protocol):
    """Lock and unlock of the session, from whichever buses answer."""

    @property
    def sources(self) -> list[str]:
        """The signal sources being listened to; empty when no bus answered."""
        ...

    async def start(self, on_lock: Callable[[bool, str], None]) -> None: ...

    async def stop(self) -> None: ...


class SnapshotStore(Protocol):
    """The latest activity snapshot, where the other services read it."""

    async def put(self, snapshot: pb.Snapshot) -> None: ...

    async def get(self) -> pb.Snapshot | None: ...


class EventStore(Protocol):
    """The durable envelopes of what happened (state, focus, lock), written in batches."""

    async def append(self, rows: Sequence[Mapping[str, Any]]) -> None: ...
