"""The sensor's settings: the shared part plus its ports, thresholds and display."""

from __future__ import annotations

from kronii.foundation.settings import ServiceSettings
from pydantic import AliasChoices, Field, model_validator
from pydantic_settings import SettingsConfigDict

__all__ = ["SensorSettings"]


class SensorSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="KRONII_SENSOR_", extra="ignore", frozen=True)

    http_port: int = Field(default=8101, ge=0, le=65535)
    grpc_port: int = Field(default=7101, ge=0, le=65535)
    active_grace_secs: float = Field(default=30.0, gt=0)
    idle_threshold_secs: float = Field(default=300.0, gt=0)
    title_interval_secs: float = Field(default=5.0, ge=0)
    tick_interval_secs: float = Field(default=1.0, gt=0, le=60)
    # The X display to watch; $DISPLAY when unset.
    display: str | None = Field(
        default=None, validation_alias=AliasChoices("KRONII_SENSOR_DISPLAY", "DISPLAY")
    )
    # Keep activity events in a JetStream stream this long so late consumers can replay them.
    stream_max_age_secs: float = Field(default=86400.0, gt=0)
    # The activity history: spans older than this many days are deleted (and the raw events with them).
    activity_retention_days: float = Field(default=30.0, gt=0)
    # The open span's end is written at most this often (and when it closes).
    activity_flush_secs: float = Field(default=30.0, gt=0)
    # Identical data seen again within this many seconds extends a span; a longer silence (the
    # sensor stopped, the machine asleep) ends it at the last time seen.
    activity_pulse_secs: float = Field(default=10.0, gt=0)

    @model_validator(mode="after")
    def _thresholds_ordered(self) -> SensorSettings:
        if self.idle_threshold_secs <= self.active_grace_secs:
            raise ValueError(
                "KRONII_SENSOR_IDLE_THRESHOLD_SECS must be greater than KRONII_SENSOR_ACTIVE_GRACE_SECS"
            )
        if self.activity_pulse_secs <= self.tick_interval_secs:
            raise ValueError(
                "KRONII_SENSOR_ACTIVITY_PULSE_SECS must be greater than KRONII_SENSOR_TICK_INTERVAL_SECS"
            )
        return self
