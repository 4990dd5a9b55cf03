"""The vision engine's settings: the shared part plus its ports, planner, safety policy, cadence and
the names it uses with capture and the broker, each overridable as KRONII_VISION_<NAME>."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from kronii.foundation.settings import ServiceSettings
from pydantic import Field, SecretStr, model_validator
from pydantic_settings import SettingsConfigDict

__all__ = ["VisionSettings"]

Policy = Literal["allow", "confirm", "deny"]


class VisionSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="KRONII_VISION_", extra="ignore", frozen=True)

    http_port: int = Field(default=8108, ge=0, le=65535)
    grpc_port: int = Field(default=7108, ge=0, le=65535)
    # The X display whose screen is read and acted on (default: $DISPLAY).
    display: str | None = None
    # "rules" plans the simple intents without a model; "openai" (any OpenAI-compatible server) and
    # "llamacpp" (a GGUF file in process) plan the rest from the redacted tree and OCR text.
    planner: Literal["rules", "openai", "llamacpp"] = "rules"
    llm_base_url: str | None = None
    llm_model: str = "local"
    llm_api_key: SecretStr | None = None
    llamacpp_model_path: Path | None = None
    llm_timeout_secs: float = Field(default=30.0, gt=0, le=600)
    llm_max_output_tokens: int = Field(default=512, ge=64, le=4096)
    # R3: the apps a plan may open, as name=command pairs separated by ";" (e.g. "terminal=xterm").
    allowed_apps: str = ""
    # Every action class has a policy.
    read_only_policy: Policy = "allow"
    input_policy: Policy = "allow"
    launch_policy: Policy = "confirm"
    min_ocr_confidence: float = Field(default=0.6, ge=0, le=1)
    # What a model is shown of the tree (seed: at most 20 nodes); the context keeps every element of
    # the window in front a person can see, up to max_context_nodes, no deeper than max_tree_depth
    # below the window (GTK4 nests a button a dozen levels down).
    max_tree_nodes: int = Field(default=20, ge=2, le=200)
    max_context_nodes: int = Field(default=300, ge=2, le=2000)
    max_tree_depth: int = Field(default=32, ge=1, le=64)
    # Ticks while a plan is active: between these, slower when the ticks cost more than the budget.
    tick_fastest_secs: float = Field(default=0.5, gt=0, le=10)
    tick_slowest_secs: float = Field(default=2.0, gt=0, le=60)
    tick_cpu_budget: float = Field(default=0.1, gt=0, le=1)
    # Plans wait this long for a person's answer.
    plan_ttl_secs: int = Field(default=600, ge=10, le=86_400)
    # Screenshots from capture (redacted); off: the tree only.
    use_capture: bool = True
    capture_timeout_secs: float = Field(default=8.0, gt=0, le=60)
    # The name the engine signs in with at capture and the broker, and its Ed25519 key
    # (default <data_dir>/vision/vision.key; created at first start, the .pub beside it).
    client_id: str = Field(default="vision", min_length=1, max_length=64)
    key_path: Path | None = None
    broker_url: str | None = None
    lease_secs: int = Field(default=30, ge=5, le=600)
    # Desktop notifications for confirmations.
    notify: bool = True

    @model_validator(mode="after")
    def _checked(self) -> VisionSettings:
        if self.planner == "openai" and not self.llm_base_url:
            raise ValueError("KRONII_VISION_LLM_BASE_URL is required with planner=openai")
        if self.planner == "llamacpp" and self.llamacpp_model_path is None:
            raise ValueError("KRONII_VISION_LLAMACPP_MODEL_PATH is required with planner=llamacpp")
        if self.tick_fastest_secs > self.tick_slowest_secs:
            raise ValueError("tick_fastest_secs must not be more than tick_slowest_secs")
        self.apps()
        return self

    def apps(self) -> dict[str, str]:
        """The allowlist: app name -> command line."""
        apps: dict[str, str] = {}
        for pair in filter(None, (part.strip() for part in self.allowed_apps.split(";"))):
            name, sep, command = pair.partition("=")
            if not sep or not name.strip() or not command.strip():
                raise ValueError(f"allowed_apps entries are name=command, not {pair!r}")
            apps[name.strip()] = command.strip()
        return apps

    def key_file(self) -> Path:
        return self.key_path or Path(self.data_dir) / "vision" / "vision.key"
