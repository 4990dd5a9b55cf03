"""What the sensor's snapshot says about the desktop, as the matcher takes it."""

from __future__ import annotations

from dataclasses import dataclass

from kronii.capture.core.bypass import WindowFacts

__all__ = ["SensorSnapshot"]


@dataclass(frozen=True, slots=True)
class SensorSnapshot:
    """The sensor's latest snapshot: the focused window (None: none has the focus; its `focus_seq`
    is not yet the matcher's), the lock, whether the sensor sees a display, and when the last input
    happened by the X server's idle time (None when the snapshot does not say), and when the sensor
    wrote it (None when it does not say): a snapshot older than a focus event already followed is
    stale about the focus."""

    focus: WindowFacts | None
    locked: bool
    display_available: bool
    input_at_ms: int | None
    updated_at_ms: int | None = None
