"""The supervisor's settings: the shared part plus its ports, tmux socket, agent kinds and the
numbers of seed 002 (sections 12 to 14), each overridable as KRONII_SUPERVISOR_<NAME>."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kronii.foundation.settings import ServiceSettings
from kronii.supervisor.core.agent_kinds import KindBook
from kronii.supervisor.core.params import SupervisorParams
from kronii.supervisor.core.threads import GuardLimits
from kronii.supervisor.core.wake_policy import WakeLimits
from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import SettingsConfigDict

__all__ = ["SupervisorSettings"]


class SupervisorSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="KRONII_SUPERVISOR_", extra="ignore", frozen=True)

    http_port: int = Field(default=8105, ge=0, le=65535)
    grpc_port: int = Field(default=7105, ge=0, le=65535)

    # tmux: the server's socket (tmux -S); unset means the user's default server.
    tmux_socket: str | None = None
    tmux_binary: str = "tmux"
    # One tmux session per workspace: <prefix><workspace_id>.
    session_prefix: str = "agents_"
    # Per-kind overrides as JSON, merged over the built-in kinds (codex, claude, python, generic):
    # {"codex": {"submit_pause_secs": 0.2, "resume_argv": ["codex", "exec", "resume", "{session_id}", "{prompt}"]}}
    agent_kinds: dict[str, dict[str, Any]] = Field(default_factory=dict)

    # Section 12.
    ack_timeout_secs: float = Field(default=8.0, gt=0, le=600)
    ack_retries: int = Field(default=2, ge=0, le=10)
    resume_max_attempts: int = Field(default=2, ge=0, le=10)
    stale_session_secs: float = Field(default=12 * 3600.0, gt=0)
    crash_loop_failures: int = Field(default=3, ge=0)
    crash_loop_window_secs: float = Field(default=900.0, gt=0)
    # Sections 12 and 13.2.
    quiet_window_secs: float = Field(default=20.0, ge=0)
    recheck_secs: float = Field(default=5.0, gt=0)
    max_defer_secs: float = Field(default=60.0, gt=0)
    # Section 14.
    rate_limit: int = Field(default=10, ge=0)
    rate_window_secs: float = Field(default=60.0, gt=0)
    cooldown_failures: int = Field(default=3, ge=0)
    cooldown_secs: float = Field(default=15.0, ge=0)
    cooldown_max_secs: float = Field(default=60.0, ge=0)
    no_progress_turns: int = Field(default=20, ge=0)
    repeated_finding_cycles: int = Field(default=3, ge=0)
    # The activation orchestrator (section 8.4): an agent on a thread is woken when a message is
    # addressed to it, when it has more than wake_lag_messages unread, or when what it read has waited
    # wake_dormancy_secs for its answer (0 turns a rule off). Threads are looked at again every
    # orchestrator_sweep_secs; a wake's prompt is at most wake_prompt_chars.
    orchestrator_enabled: bool = True
    wake_lag_messages: int = Field(default=10, ge=0)
    wake_dormancy_secs: float = Field(default=300.0, ge=0)
    wake_prompt_chars: int = Field(default=1000, ge=200, le=16 * 1024)
    orchestrator_sweep_secs: float = Field(default=5.0, gt=0, le=3600)
    # The critic's repeated failures are offered to an agent and handed over only on the person's
    # yes; agents named here (agent_id, or workspace/agent_id) get them without asking.
    hand_without_asking: list[str] = Field(default_factory=list)
    # Section 11.
    max_payload_bytes: int = Field(default=16 * 1024, gt=0, le=1024 * 1024)
    literal_max_chars: int = Field(default=200, ge=0)

    # The input broker's session of the desktop this supervisor's panes are on: while the person
    # holds it (kronii.broker.control), triggers are deferred. Empty: a hold on any session counts.
    desktop_session: str = ""

    # Registry hygiene (section 18): heartbeats older than this mark an active runtime idle and
    # count as stale; the reconcile checks every pid and pane this often.
    heartbeat_ttl_secs: float = Field(default=120.0, gt=0)
    reconcile_interval_secs: float = Field(default=5.0, gt=0)
    # How long a repeated trigger_id returns the first outcome.
    dedupe_ttl_secs: int = Field(default=7 * 86400, gt=0)

    # Section 15: callers present a token signed with this secret. Unset: a random secret is kept
    # in <data_dir>/supervisor/token.key (0600), which `kronii agents` on this host reads too.
    token_secret: SecretStr | None = None
    token_ttl_secs: int = Field(default=3600, gt=0)

    @field_validator("agent_kinds")
    @classmethod
    def _kinds_valid(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        KindBook.from_overrides(value)
        return value

    @model_validator(mode="after")
    def _defer_window(self) -> SupervisorSettings:
        if self.max_defer_secs < self.recheck_secs:
            raise ValueError(
                "KRONII_SUPERVISOR_MAX_DEFER_SECS must be at least KRONII_SUPERVISOR_RECHECK_SECS"
            )
        if self.token_secret is not None and len(self.token_secret.get_secret_value()) < 16:
            raise ValueError("KRONII_SUPERVISOR_TOKEN_SECRET must be at least 16 characters")
        return self

    def params(self) -> SupervisorParams:
        names = SupervisorParams.__dataclass_fields__
        return SupervisorParams(**{name: getattr(self, name) for name in names})

    def wake_limits(self) -> WakeLimits:
        return WakeLimits(lag_messages=self.wake_lag_messages, dormancy_secs=self.wake_dormancy_secs)

    def guard_limits(self) -> GuardLimits:
        return GuardLimits(
            no_progress_turns=self.no_progress_turns, repeated_finding_cycles=self.repeated_finding_cycles
        )

    def kinds(self) -> KindBook:
        return KindBook.from_overrides(self.agent_kinds)

    @property
    def token_key_file(self) -> Path:
        return self.data_dir / "supervisor" / "token.key"
