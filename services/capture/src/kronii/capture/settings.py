"""The capture service's settings: the shared part plus ports, display, burst and TTL defaults, rate
limits, retention, the access front door and the master key provider."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from kronii.foundation.settings import ServiceSettings
from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import NoDecode, SettingsConfigDict

__all__ = ["CaptureSettings"]


def _list(value: object) -> object:
    # "a,b c" from the environment; a list when built in code.
    if isinstance(value, str):
        return [item for item in value.replace(",", " ").split() if item]
    return value


class CaptureSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="KRONII_CAPTURE_", extra="ignore", frozen=True)

    http_port: int = Field(default=8102, ge=0, le=65535)
    grpc_port: int = Field(default=7102, ge=0, le=65535)
    # The X display to capture; $DISPLAY when unset (as the sensor). A Wayland session that answers on
    # WAYLAND_DISPLAY wins over it: DISPLAY is then XWayland's (app.py `_open_display`).
    display: str | None = Field(
        default=None, validation_alias=AliasChoices("KRONII_CAPTURE_DISPLAY", "DISPLAY")
    )

    # Request defaults and the TTL sweep.
    default_ttl_ms: int = Field(default=30_000, ge=1_000, le=300_000)
    merge_window_ms: int = Field(default=2_000, ge=0, le=60_000)
    matcher_interval_ms: int = Field(default=100, ge=10, le=5_000)

    # Rate limits: global and per app per minute; back off this long after the last input.
    global_per_minute: int = Field(default=30, ge=1)
    per_app_per_minute: int = Field(default=10, ge=1)
    input_backoff_ms: int = Field(default=1_500, ge=0, le=60_000)
    app_restart_tolerance_ms: int = Field(default=300_000, ge=0)

    # Retention: raw originals (0 keeps none) and redacted copies, in days; purge interval.
    raw_days: int = Field(default=1, ge=0, le=3650)
    redacted_days: int = Field(default=7, ge=1, le=3650)
    purge_interval_secs: float = Field(default=3600.0, gt=0)

    # Redaction: more than this share of the primary masked -> the job is rejected.
    max_masked_area: float | None = Field(default=None, ge=0.0, le=1.0)

    # Access: the Unix socket's directory ($XDG_RUNTIME_DIR/kronii, else <data_dir>/run), the uids and
    # executables allowed through it (empty uid list: this service's own uid; empty exe list: any).
    socket_dir: Path | None = None
    allowed_uids: Annotated[list[int], NoDecode] = Field(default_factory=list)
    allowed_exes: Annotated[list[str], NoDecode] = Field(default_factory=list)
    token_ttl_secs: int = Field(default=60, ge=1, le=3600)
    session_ttl_secs: int = Field(default=600, ge=10, le=86_400)
    read_raw_encrypted_enabled: bool = False
    # A person's read-only window after a proof of presence (polkit, else the TTY binding), and how
    # long polkit's agent may wait for the person. Unregistered local processes may request
    # captures unless local_request_capture is off; reading always needs the proof.
    human_window_secs: float = Field(default=120.0, gt=0, le=3600)
    polkit_timeout_secs: float = Field(default=60.0, gt=0, le=600)
    local_request_capture: bool = True
    breaker_failures: int = Field(default=5, ge=1)
    breaker_window_secs: float = Field(default=60.0, gt=0)
    breaker_open_secs: float = Field(default=120.0, gt=0)

    # The master key: Vault transit when set (shared KRONII_VAULT_* accepted), else the Secret
    # Service when its default keyring is unlocked and answers without a prompt, each call within
    # secret_service_timeout_secs, else a key file in the data directory (`kronii keys migrate`
    # moves it to the keyring later).
    vault_url: str | None = Field(
        default=None, validation_alias=AliasChoices("KRONII_CAPTURE_VAULT_URL", "KRONII_VAULT_URL")
    )
    vault_token: str | None = Field(
        default=None, validation_alias=AliasChoices("KRONII_CAPTURE_VAULT_TOKEN", "KRONII_VAULT_TOKEN")
    )
    vault_key_name: str = "kronii-capture"
    use_secret_service: bool = True
    secret_service_timeout_secs: float = Field(default=5.0, gt=0, le=60)

    @field_validator("allowed_uids", "allowed_exes", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        return _list(value)

    @property
    def store_dir(self) -> Path:
        """Where the sealed objects live (0700)."""
        return self.data_dir / "capture" / "objects"
