"""What the sensor's use cases need of the outside: the display (focus and idle), the lock signals,
the title redaction, the publisher of activity events, the snapshot store and the event store; and
the exceptions their adapters raise. `adapters/` implements them; fakes in tests may stand in. The
audit rows go through the one audit port, `kronii.foundation.audit_trail.AuditTrail`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from kronii.sensor.core.activity_query import Cursor, DeleteSelector, ImportedSpan, SpanRecord, TimeRange
from kronii.sensor.core.model import Focus
from kronii.sensor.core.snapshot import ActivityEvent, Envelope, SensorSnapshot
from kronii.sensor.core.spans import Span, SummaryRow

__all__ = [
    "ActivityPublisher",
    "DisplaySource",
    "DisplayUnavailable",
    "EventStore",
    "IdleUnavailable",
    "LockSignals",
    "PublishFailed",
    "SnapshotStore",
    "SpanStore",
    "StoreFailed",
    "TitleCleaner",
]


class DisplayUnavailable(Exception):
    """There is no usable display: none set, unreachable, refused, or the connection was lost."""


class IdleUnavailable(Exception):
    """The X server lacks the MIT-SCREEN-SAVER extension, so it cannot report idle time."""


class PublishFailed(Exception):
    """An activity event did not go out (the bus refused it or is away)."""


class StoreFailed(Exception):
    """A store (the snapshot in Redis, the envelopes in PostgreSQL) did not take a write."""


class DisplaySource(Protocol):
    """One display (X11, or a Wayland compositor): the focused window as it changes, and the user's idle
    time. `problem` says in a sentence what this display cannot tell ("" when it tells all)."""

    display_name: str
    problem: str

    @property
    def has_idle(self) -> bool:
        """Whether idle time can be read (the MIT-SCREEN-SAVER extension)."""
        ...

    @property
    def errors(self) -> int:
        """How many asynchronous display errors were seen so far."""
        ...

    def idle_ms(self) -> int:
        """Milliseconds since the last input. Raises IdleUnavailable, or DisplayUnavailable when the
        display went away. Blocks (the caller calls it off the loop) unless `watch_idle` said True:
        it is then answered from what the display's events told, without I/O."""
        ...

    def watch_idle(self, on_idle: Callable[[int], None]) -> bool:
        """Called before `start`: whether the display tells the idle time by events, so that
        `idle_ms()` needs no I/O. `on_idle(idle_ms)` may then run on the watcher's thread when input
        comes back after a quiet while (X11's SYNC alarms do; a compositor's notices need not)."""
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


class TitleCleaner(Protocol):
    def clean(self, focus: Focus) -> Focus:
        """The focus with its title through the redaction engine (withheld when that fails)."""
        ...


class ActivityPublisher(Protocol):
    async def publish(self, kind: str, event: ActivityEvent) -> None:
        """Publish on kronii.activity.<kind>; raises PublishFailed."""
        ...


class SnapshotStore(Protocol):
    """The latest activity snapshot, where the other services read it."""

    async def keep(self, snapshot: SensorSnapshot) -> None:
        """Raises StoreFailed."""
        ...

    async def latest(self) -> SensorSnapshot | None: ...


class EventStore(Protocol):
    """The durable envelopes of what happened (state, focus, lock), written in batches."""

    async def write(self, envelopes: Sequence[Envelope]) -> None:
        """Raises StoreFailed."""
        ...


class SpanStore(Protocol):
    """The activity history: spans, and beside them the raw envelopes that retention and a person's
    delete remove too. Every method raises StoreFailed."""

    async def insert(self, span: Span) -> int:
        """Write a span; its row id."""
        ...

    async def update_end(self, span_id: int, ended_at: float) -> None: ...

    async def write_closed(self, spans: Sequence[tuple[Span, int | None]]) -> None:
        """Closed spans in one transaction: each inserted, or (with the row id it was written under
        while open) its end updated."""
        ...

    async def page(
        self, window: TimeRange, *, app: str | None, kind: str | None, limit: int, after: Cursor | None
    ) -> list[SpanRecord]:
        """Spans overlapping the range, by start then id, after the cursor, at most `limit`."""
        ...

    async def totals(self, window: TimeRange, by: str, *, leave_out: Sequence[int]) -> list[SummaryRow]:
        """Seconds per key inside the range (each span clipped), not counting the rows in `leave_out`."""
        ...

    async def delete(self, selector: DeleteSelector) -> tuple[int, int]:
        """(spans deleted or cut, envelopes deleted)."""
        ...

    async def prune(self, before: float) -> tuple[int, int]:
        """Retention: (spans, envelopes) older than `before` deleted."""
        ...

    async def add_imported(self, spans: Sequence[ImportedSpan]) -> int:
        """The spans not imported before (by key) added; how many."""
        ...
