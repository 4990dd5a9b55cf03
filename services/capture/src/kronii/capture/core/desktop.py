"""What the sensor's snapshot says about the desktop, as the matcher takes it."""

from __future__ import annotations

from dataclasses import dataclass

from kronii.capture.core.bypass import WindowFacts

__all__ = ["SensorSnapshot"]


@dataclass(frozen=True, slots=True)
class SensorSnapshot:
    """The sensor's latest snapshot: the focused window (None: none has the focus; its `focus_seq`
    is not yet the matcher's), the lock, whether the sensor sees a display, and when the last input
    happened by the X server's idle time (None when the snapshot does not say)."""

    focus: WindowFacts | None
    locked: bool
    display_available: bool
    input_at_ms: int | None
