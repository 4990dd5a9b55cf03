"""Tunable thresholds of the sensor core and the idle-to-state mapping they define."""

from __future__ import annotations

from dataclasses import dataclass

from kronii.sensor.core.model import ActivityState


@dataclass(frozen=True, slots=True)
class SensorParams:
    active_grace_secs: float = 30.0
    idle_threshold_secs: float = 300.0
    # TitleChanged is a hint, not a log: a chatty title (terminal, clock) must not flood consumers.
    title_interval_secs: float = 5.0

    def __post_init__(self) -> None:
        if self.active_grace_secs <= 0:
            raise ValueError("active_grace_secs must be positive")
        # Passive must be reachable before Inactive, or row 4 and row 5 would disagree.
        if self.idle_threshold_secs <= self.active_grace_secs:
            raise ValueError("idle_threshold_secs must exceed active_grace_secs")
        if self.title_interval_secs < 0:
            raise ValueError("title_interval_secs must not be negative")


def natural_state(params: SensorParams, idle_secs: float) -> ActivityState:
    """The state the user's idle time alone implies; Locked is never natural."""
    if idle_secs < params.active_grace_secs:
        return ActivityState.ACTIVE
    if idle_secs < params.idle_threshold_secs:
        return ActivityState.PASSIVE
    return ActivityState.INACTIVE
