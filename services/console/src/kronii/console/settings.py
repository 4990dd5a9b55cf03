"""The console's settings: the shared part plus its port, the login link's and the session's lives,
the person's timezone and the body limit, each overridable as KRONII_CONSOLE_<NAME>."""

from __future__ import annotations

from kronii.foundation.settings import ServiceSettings
from pydantic import Field
from pydantic_settings import SettingsConfigDict

__all__ = ["ConsoleSettings"]


class ConsoleSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="KRONII_CONSOLE_", extra="ignore", frozen=True)

    http_port: int = Field(default=8109, ge=0, le=65535)
    # The console speaks HTTP only: a page and its fragments, nothing another service calls over gRPC.
    grpc_port: int = Field(default=0, ge=0, le=65535)
    # A login link is good once, for this long after `kronii console` asked for it.
    login_link_secs: float = Field(default=120.0, gt=0, le=3600)
    # A session unused this long is gone; the person runs `kronii console` again.
    session_idle_secs: float = Field(default=8 * 3600.0, gt=0, le=30 * 86400)
    # The person's timezone for Today's day boundaries (an IANA name); empty: the system's local zone.
    timezone: str = Field(default="", max_length=64)
    # A page's form or action is small: anything larger is refused before it is read.
    max_body_bytes: int = Field(default=64 * 1024, ge=1024, le=1024 * 1024)
    # How long a page waits for another service before it says that service is not answering.
    service_timeout_secs: float = Field(default=5.0, gt=0, le=60)
    # Every Redis key starts with this: two meshes may share one Redis.
    key_prefix: str = Field(default="kronii:console", min_length=1, max_length=100, pattern=r"^[\w:.-]+$")
    # Where the other services answer, by name ({"sensor": "http://sensor:8101"}), where they do not run
    # beside the console (compose, Helm); a service not named is found at its own configured port.
    service_urls: dict[str, str] = Field(default_factory=dict)
