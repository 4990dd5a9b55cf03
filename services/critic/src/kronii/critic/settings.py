"""The critic's settings: the shared part plus its ports, memory and embedding limits, each
overridable as KRONII_CRITIC_<NAME>. The person's own choices (UseAI, Verbosity, RetentionDays,
trigger toggles, Do-Not-Disturb) live in critic.toml (see adapters/policy_file.py)."""

from __future__ import annotations

from kronii.common.settings import ServiceSettings
from pydantic import Field
from pydantic_settings import SettingsConfigDict

__all__ = ["CriticSettings"]


class CriticSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="KRONII_CRITIC_", extra="ignore", frozen=True)

    http_port: int = Field(default=8107, ge=0, le=65535)
    grpc_port: int = Field(default=7107, ge=0, le=65535)
    # The RAM tier: the last records with their unit vectors.
    ring_size: int = Field(default=200, ge=1, le=100_000)
    # Embedding jobs waiting; beyond this the oldest is dropped (counted).
    embed_queue_size: int = Field(default=256, ge=1, le=100_000)
    # At most this share of one core goes to embeddings, and one job at most this long.
    embed_cpu_share: float = Field(default=0.5, gt=0, le=1.0)
    embed_job_timeout_secs: float = Field(default=2.0, gt=0, le=60)
    # After a failing command the shell waits this long at most for the hint (the hook's own deadline
    # is in the shell script; this is the critic's budget to produce it).
    hint_budget_ms: int = Field(default=15, ge=1, le=1000)
    # When the nightly clustering of near-duplicate errors runs (local hour).
    cluster_hour: int = Field(default=3, ge=0, le=23)
