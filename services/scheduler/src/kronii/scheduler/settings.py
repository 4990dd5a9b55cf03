"""The scheduler's settings: the shared part plus its ports, ceilings and timer cadence, each
overridable as KRONII_SCHEDULER_<NAME>."""

from __future__ import annotations

from kronii.foundation.settings import ServiceSettings
from kronii.scheduler.core.model import Limits
from pydantic import Field
from pydantic_settings import SettingsConfigDict

__all__ = ["SchedulerSettings"]


class SchedulerSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="KRONII_SCHEDULER_", extra="ignore", frozen=True)

    http_port: int = Field(default=8104, ge=0, le=65535)
    grpc_port: int = Field(default=7104, ge=0, le=65535)

    # Runs admitted in any sliding hour, over all apps and per app.
    global_runs_per_hour: int = Field(default=30, ge=1, le=100_000)
    app_runs_per_hour: int = Field(default=10, ge=1, le=100_000)
    # The safety-net Tick fires when no Tick fired for this long.
    safety_net_interval_secs: float = Field(default=300.0, gt=0, le=86400)
    # How often Redis is asked for due wake-ups: the worst lateness of a Tick.
    poll_interval_secs: float = Field(default=0.2, gt=0, le=10)
    # A claimed wake-up whose Tick was not confirmed within this lease fires again (a crash mid-fire).
    claim_lease_secs: float = Field(default=10.0, gt=0, le=600)
    # Bounds on what a plan may ask for.
    max_cooldown_secs: float = Field(default=86400.0, gt=0)
    max_wakeup_horizon_secs: float = Field(default=7 * 86400.0, gt=0)
    # Every Redis key starts with this: two meshes may share one Redis.
    key_prefix: str = Field(default="kronii:scheduler", min_length=1, max_length=100, pattern=r"^[\w:.-]+$")

    def limits(self) -> Limits:
        return Limits(
            global_runs_per_hour=self.global_runs_per_hour,
            app_runs_per_hour=self.app_runs_per_hour,
            safety_net_interval_secs=self.safety_net_interval_secs,
            max_cooldown_secs=self.max_cooldown_secs,
            max_wakeup_horizon_secs=self.max_wakeup_horizon_secs,
        )
