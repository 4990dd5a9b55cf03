"""The critic's settings: the shared part plus its ports, memory and embedding limits, each
overridable as KRONII_CRITIC_<NAME>. The person's own choices (UseAI, Verbosity, RetentionDays,
trigger toggles, Do-Not-Disturb) live in critic.toml (see adapters/policy_file.py). Where the
supervisor keeps its agents' panes is read from the supervisor's own variables, so both agree."""

from __future__ import annotations

from typing import Any

from kronii.critic.core.knn_plan import (
    DEFAULT_CANDIDATES,
    DEFAULT_EF_SEARCH,
    DEFAULT_EXACT_BELOW,
    MAX_EF_SEARCH,
)
from kronii.foundation.settings import ServiceSettings
from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import SettingsConfigDict

__all__ = ["CriticSettings"]


class CriticSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="KRONII_CRITIC_", extra="ignore", frozen=True)

    http_port: int = Field(default=8107, ge=0, le=65535)
    grpc_port: int = Field(default=7107, ge=0, le=65535)
    # The RAM tier: the last records with their unit vectors.
    ring_size: int = Field(default=200, ge=1, le=100_000)
    # The long tier's similar-record search (core/knn_plan.py): pgvector's hnsw.ef_search, and the
    # table size below which every row is scanned exactly instead of asking the HNSW index.
    knn_ef_search: int = Field(default=DEFAULT_EF_SEARCH, ge=1, le=MAX_EF_SEARCH)
    knn_exact_below: int = Field(default=DEFAULT_EXACT_BELOW, ge=0)
    # The search in the critic's process (core/sign_index.py), loaded from PostgreSQL at start; false
    # leaves it to PostgreSQL. The rows scored exactly after the sign codes chose them.
    knn_in_process: bool = True
    knn_candidates: int = Field(default=DEFAULT_CANDIDATES, ge=1, le=1_000_000)
    # Embedding jobs waiting; beyond this the oldest is dropped (counted).
    embed_queue_size: int = Field(default=256, ge=1, le=100_000)
    # At most this share of one core goes to embeddings, and one job at most this long.
    embed_cpu_share: float = Field(default=0.5, gt=0, le=1.0)
    embed_job_timeout_secs: float = Field(default=2.0, gt=0, le=60)
    # True: ~45 MB for the model and ~60 ms a line; false: ~160 MB and ~6 ms a line (same vectors).
    embed_low_memory: bool = True
    # How often the files of shells gone without their exit hook (kill -9) are looked for.
    gone_sweep_secs: float = Field(default=30.0, ge=0.1, le=3600)
    # When the nightly clustering of near-duplicate errors runs (local hour).
    cluster_hour: int = Field(default=3, ge=0, le=23)
    # The same failure a third time within the hour is offered to the workspace's agent through the
    # supervisor (the person's yes hands it over); false: a plain notification, as before.
    offer_repeated_failures: bool = True
    # Opt-in: after a failing command in a pane of the supervisor's agent sessions, the text it printed
    # is read from the pane (tmux capture-pane). Never from any other terminal.
    pane_error_text: bool = False
    # The supervisor's tmux server (unset: the user's default server) and its sessions' prefix.
    supervisor_tmux_socket: str | None = Field(
        default=None,
        validation_alias=AliasChoices(
            "KRONII_CRITIC_SUPERVISOR_TMUX_SOCKET", "KRONII_SUPERVISOR_TMUX_SOCKET"
        ),
    )
    supervisor_session_prefix: str = Field(
        default="agents_",
        validation_alias=AliasChoices(
            "KRONII_CRITIC_SUPERVISOR_SESSION_PREFIX", "KRONII_SUPERVISOR_SESSION_PREFIX"
        ),
    )
    supervisor_tmux_binary: str = Field(
        default="tmux",
        validation_alias=AliasChoices(
            "KRONII_CRITIC_SUPERVISOR_TMUX_BINARY", "KRONII_SUPERVISOR_TMUX_BINARY"
        ),
    )

    @field_validator("supervisor_tmux_socket", mode="before")
    @classmethod
    def _empty_socket_is_default(cls, value: Any) -> Any:
        return None if value == "" else value
