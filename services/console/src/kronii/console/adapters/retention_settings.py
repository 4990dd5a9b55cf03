"""How long the sensor keeps the activity history: its own setting
(`KRONII_SENSOR_ACTIVITY_RETENTION_DAYS`, or the config file), read the way the sensor reads it. The
capture service says its own retention over HTTP; the critic's is in its policy file (30 days unless
changed there); the pipeline's runs and the audit log are not pruned."""

from __future__ import annotations

from kronii.foundation.settings import KroniiSettings, load_settings
from pydantic import Field
from pydantic_settings import SettingsConfigDict

__all__ = ["activity_retention_days"]


class _SensorRetention(KroniiSettings):
    model_config = SettingsConfigDict(env_prefix="KRONII_SENSOR_", extra="ignore", frozen=True)
    activity_retention_days: float = Field(default=30.0, gt=0)


def activity_retention_days() -> float:
    return load_settings(_SensorRetention).activity_retention_days
