"""The pipeline's settings: the shared part plus its ports, the LLM backend, the intake and rate
limits, and the capture socket, each overridable as KRONII_PIPELINE_<NAME>."""

from __future__ import annotations

from pathlib import Path

from kronii.foundation.settings import ServiceSettings
from kronii.pipeline.core.limits import RateLimits
from kronii.pipeline.core.roles.bounds import ModelBounds, output_budget
from kronii.pipeline.core.roles.values import BackendKind, Role
from pydantic import Field, SecretStr, model_validator
from pydantic_settings import SettingsConfigDict

__all__ = ["PipelineSettings"]


class PipelineSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="KRONII_PIPELINE_", extra="ignore", frozen=True)

    http_port: int = Field(default=8103, ge=0, le=65535)
    grpc_port: int = Field(default=7103, ge=0, le=65535)

    # Roles: `rules` needs no model; `openai` any OpenAI-compatible server; `llamacpp` a local GGUF.
    llm_backend: BackendKind = BackendKind.RULES
    llm_base_url: str | None = None
    llm_model: str = ""
    llm_api_key: SecretStr | None = None
    # One role call, all its attempts together; a call past it is cancelled and the rules answer.
    llm_timeout_secs: float = Field(default=30.0, gt=0, le=600)
    # A ceiling: each role asks for what its largest allowed answer needs (`roles.bounds`).
    llm_max_output_tokens: int = Field(default=512, ge=16, le=32_768)
    llm_response_format: str = "auto"
    llm_price_per_1k_input: float = Field(default=0.0, ge=0)
    llm_price_per_1k_output: float = Field(default=0.0, ge=0)
    llamacpp_model_path: Path | None = None
    # The redacted context a round may show a model, in estimated tokens.
    context_budget_tokens: int = Field(default=1_200, ge=64, le=100_000)

    # Intake: near-duplicates within this window coalesce; more title changes than this per window is churn.
    coalesce_window_ms: int = Field(default=1_500, ge=50, le=60_000)
    title_max_changes: int = Field(default=3, ge=1, le=100)
    # Core rate limits (used when the scheduler does not answer admissions, and for captures always).
    runs_global_per_hour: int = Field(default=12, ge=0, le=100_000)
    runs_per_app_per_hour: int = Field(default=4, ge=0, le=100_000)
    captures_global_per_hour: int = Field(default=6, ge=0, le=10_000)
    captures_per_app_per_10min: int = Field(default=1, ge=0, le=10_000)
    # The Planner's cooldown is capped here; the deferral backoff after red risk, a Defer route or a limit.
    max_cooldown_secs: float = Field(default=3_600.0, ge=0, le=86_400)
    defer_backoff_secs: float = Field(default=60.0, ge=0, le=86_400)

    # ScreenCapture through the capture service's Unix socket (same user): the socket's directory,
    # else $XDG_RUNTIME_DIR/kronii, else <data_dir>/run (the capture service's own rule).
    capture_enabled: bool = True
    capture_socket_dir: Path | None = None
    capture_ttl_ms: int = Field(default=30_000, ge=1_000, le=300_000)
    capture_risk_score: float = Field(default=0.4, ge=0, le=1)

    # The tmux plugin: summarises the focused pane of the user's tmux server (or the one at this socket)
    # when a terminal has the focus. Off, or no tmux installed: terminals get the Base context only.
    tmux_plugin: bool = True
    tmux_socket: str | None = None

    notify_channel: str = Field(default="desktop", pattern=r"^[A-Za-z0-9_-]{1,64}$")
    desktop_notifications: bool = True
    scheduler_admit_timeout_secs: float = Field(default=0.5, gt=0, le=10)
    plugin_timeout_secs: float = Field(default=2.0, gt=0, le=60)
    # How often the run loop looks for due batches and ended cooldowns.
    loop_interval_ms: int = Field(default=50, ge=5, le=5_000)

    @model_validator(mode="after")
    def _backend_needs(self) -> PipelineSettings:
        if self.llm_backend is BackendKind.OPENAI and not (self.llm_base_url and self.llm_model):
            raise ValueError(
                "the openai backend needs KRONII_PIPELINE_LLM_BASE_URL and KRONII_PIPELINE_LLM_MODEL"
            )
        if self.llm_backend is BackendKind.LLAMACPP and self.llamacpp_model_path is None:
            raise ValueError("the llamacpp backend needs KRONII_PIPELINE_LLAMACPP_MODEL_PATH")
        short = {
            str(role): need for role, need in self.role_budgets().items() if need > self.llm_max_output_tokens
        }
        if short:
            needs = ", ".join(f"the {role} {need}" for role, need in short.items())
            raise ValueError(
                f"KRONII_PIPELINE_LLM_MAX_OUTPUT_TOKENS={self.llm_max_output_tokens} cannot fit every role's "
                f"largest answer ({needs} tokens): raise it to at least {max(short.values())}"
            )
        return self

    def role_budgets(self) -> dict[Role, int]:
        """Output tokens per role call: what the role's largest allowed answer needs."""
        return {role: output_budget(role) for role in Role}

    def model_bounds(self) -> ModelBounds:
        return ModelBounds(max_cooldown_ms=round(self.max_cooldown_secs * 1000))

    def run_limits(self) -> RateLimits:
        return RateLimits(
            global_max=self.runs_global_per_hour,
            global_window_ms=3_600_000,
            per_app_max=self.runs_per_app_per_hour,
            per_app_window_ms=3_600_000,
        )

    def capture_limits(self) -> RateLimits:
        return RateLimits(
            global_max=self.captures_global_per_hour,
            global_window_ms=3_600_000,
            per_app_max=self.captures_per_app_per_10min,
            per_app_window_ms=600_000,
        )
