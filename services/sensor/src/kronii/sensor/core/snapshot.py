"""What the sensor's use cases give back and hand to their ports: the snapshot of the activity as
the other services read it, the events it publishes, and the envelopes it writes down.

The snapshot's times are integer nanoseconds of the wall clock, so that a snapshot read back from
its store is the one that was put, to the nanosecond."""

from __future__ import annotations

from dataclasses import dataclass, field

from kronii.sensor.core.model import (
    ActivityState,
    Focus,
    FocusChanged,
    LockRecorded,
    PulseEmitted,
    StateChanged,
    TitleChanged,
)

__all__ = ["ActivityEvent", "Envelope", "SensorSnapshot", "Transition", "nanoseconds"]

# What the sensor publishes (kronii.activity.<kind>) and streams to its watchers; every focus in
# one has its title redacted already.
ActivityEvent = StateChanged | FocusChanged | TitleChanged | PulseEmitted | LockRecorded


def nanoseconds(at: float) -> int:
    """Epoch seconds as integer nanoseconds (truncated, as a protobuf Timestamp takes them)."""
    return int(at * 1_000_000_000)


@dataclass(frozen=True)
class Transition:
    from_state: ActivityState | None
    to_state: ActivityState | None
    at_ns: int


@dataclass(frozen=True)
class SensorSnapshot:
    """The latest activity as shown to the other services; `focus` has its title redacted. `state`
    None only for a stored snapshot that named none."""

    state: ActivityState | None
    focus: Focus
    idle_ms: int
    locked: bool
    updated_at_ns: int
    display_available: bool
    prompt: str = ""
    last_transition: Transition | None = None


@dataclass(frozen=True)
class Envelope:
    """One durable record of what happened (a state change, a focus change, a lock, an input)."""

    at: float
    kind: str
    state: str
    detail: dict[str, str] = field(default_factory=dict)
