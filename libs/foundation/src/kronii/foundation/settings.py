"""Settings shared by every service, built from small parts.

Every variable has the `KRONII_` prefix. A service's own variables add its name
(`KRONII_SENSOR_HTTP_PORT`); infrastructure URLs are shared (`KRONII_NATS_URL`).
Invalid values stop start-up with a sentence that names the variable.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import AliasChoices, Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

__all__ = [
    "KroniiSettings",
    "ServiceSettings",
    "SettingsError",
    "default_data_dir",
    "load_settings",
]

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR"]


def default_data_dir() -> Path:
    xdg = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(xdg) / "kronii"


def _shared(name: str, default: Any) -> Any:
    return Field(default=default, validation_alias=AliasChoices(f"KRONII_{name}"))


class KroniiSettings(BaseSettings):
    """What every process of the mesh shares: infrastructure URLs, data directory, logging."""

    model_config = SettingsConfigDict(env_prefix="KRONII_", extra="ignore", frozen=True)

    nats_url: str | None = _shared("NATS_URL", None)
    redis_url: str | None = _shared("REDIS_URL", None)
    database_url: str | None = _shared("DATABASE_URL", None)
    data_dir: Path = _shared("DATA_DIR", None)
    log_level: LogLevel = _shared("LOG_LEVEL", "INFO")
    log_format: Literal["json", "text"] = _shared("LOG_FORMAT", "json")
    # The mesh token: callers the kernel cannot place (containers, other hosts) present it.
    api_token: str | None = _shared("API_TOKEN", None)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The environment wins over the config file (config_file.py), which wins over the defaults.
        from kronii.foundation.config_file import ConfigFileSource

        return (
            init_settings,
            env_settings,
            ConfigFileSource(settings_cls),
            dotenv_settings,
            file_secret_settings,
        )

    @field_validator("data_dir", mode="before")
    @classmethod
    def _default_data_dir(cls, value: Any) -> Any:
        return default_data_dir() if value in (None, "") else value

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper_level(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @field_validator("nats_url")
    @classmethod
    def _nats_scheme(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("nats://", "tls://", "ws://", "wss://")):
            raise ValueError("must be a nats:// URL")
        return value

    @field_validator("redis_url")
    @classmethod
    def _redis_scheme(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("must be a redis:// URL")
        return value

    @field_validator("database_url")
    @classmethod
    def _database_scheme(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("postgresql", "postgres://")):
            raise ValueError("must be a postgresql:// URL")
        return value


class ServiceSettings(KroniiSettings):
    """One service's settings: the shared part plus its bind address and ports.

    Subclasses set `model_config["env_prefix"]` to `KRONII_<SERVICE>_` and the port defaults.
    """

    host: str = "127.0.0.1"
    http_port: int = Field(default=0, ge=0, le=65535)
    grpc_port: int = Field(default=0, ge=0, le=65535)
    shutdown_timeout_secs: float = Field(default=4.0, gt=0, le=30)


class SettingsError(SystemExit):
    """Raised when the environment holds an invalid value; the message names the variable."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


S = TypeVar("S", bound=BaseSettings)


def _variable_name(cls: type[BaseSettings], field: str) -> str:
    info = cls.model_fields.get(field)
    alias = info.validation_alias if info is not None else None
    if isinstance(alias, AliasChoices) and alias.choices:
        return str(alias.choices[0])
    prefix = str(cls.model_config.get("env_prefix", ""))
    return f"{prefix}{field}".upper()


def _with_origin(cls: type[BaseSettings], field: str, variable: str) -> str:
    """`variable`, or where in the config file the bad value came from when the environment has none."""
    if variable in os.environ:
        return variable
    from kronii.foundation.config_file import config_path, file_key, read_config

    key = file_key(cls, field, read_config())
    return f"{variable} ({config_path()}: {key})" if key else variable


def load_settings(cls: type[S], **overrides: Any) -> S:
    """Build `cls` from the environment; turn a validation error into one sentence per variable."""
    from kronii.foundation.config_file import ConfigFileError

    try:
        return cls(**overrides)
    except ConfigFileError as error:
        raise SettingsError(f"kronii: cannot start: {error}") from None
    except ValidationError as error:
        problems = []
        for item in error.errors():
            field = str(item["loc"][0]) if item["loc"] else "?"
            variable = field if field.startswith("KRONII_") else _variable_name(cls, field)
            variable = _with_origin(cls, field, variable)
            given = item.get("input")
            shown = f" (got {given!r})" if isinstance(given, str | int | float) and given != "" else ""
            problems.append(f"{variable} is invalid: {item['msg']}{shown}.")
        raise SettingsError("kronii: cannot start: " + " ".join(problems)) from None
