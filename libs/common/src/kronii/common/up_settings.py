"""The settings of `kronii up` and where it leaves its state file: light (pydantic only), so that commands
that read them (`kronii status`, `kronii config`, rendezvous) do not import the launcher."""

from __future__ import annotations

from pathlib import Path

from kronii.common.settings import KroniiSettings
from pydantic import Field
from pydantic_settings import SettingsConfigDict

__all__ = ["LauncherSettings", "state_path"]


class LauncherSettings(KroniiSettings):
    model_config = SettingsConfigDict(env_prefix="KRONII_", extra="ignore", frozen=True)

    embedded_nats_port: int = Field(default=14222, ge=0, le=65535)
    embedded_redis_port: int = Field(default=16379, ge=0, le=65535)
    embedded_postgres_port: int = Field(default=15432, ge=0, le=65535)
    ready_timeout_secs: float = Field(default=45.0, gt=0)
    # The agents' tmux sessions outlive kronii unless asked: a coding agent mid-task is the user's work.
    stop_agents: bool = False


def state_path(data_dir: Path) -> Path:
    return data_dir / "run" / "up.json"
