"""What a service declares about itself. Light to import: `kronii up` and `kronii status` read specs
without loading any service's code."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from kronii.common.settings import ServiceSettings, SettingsError, load_settings

__all__ = ["DependencyStatus", "ServiceSpec", "checked_settings"]


@dataclass(frozen=True)
class DependencyStatus:
    ready: bool
    detail: str = ""
    required: bool = True


@dataclass(frozen=True)
class ServiceSpec:
    name: str
    settings_cls: type[ServiceSettings]
    # "module:attribute" of a zero-argument factory returning the service's ServiceApp.
    app: str
    needs: frozenset[str] = field(default_factory=lambda: frozenset({"nats", "redis", "postgres"}))
    # Position in `kronii up`'s start order and port plan (sensor 1, capture 2, ...).
    order: int = 1
    description: str = ""

    @property
    def module(self) -> str:
        return f"kronii.{self.name}"

    def app_factory(self) -> Any:
        module_name, _, attribute = self.app.partition(":")
        return getattr(importlib.import_module(module_name), attribute)


def checked_settings(spec: ServiceSpec) -> ServiceSettings:
    """The service's settings, or a SettingsError naming each variable that is invalid or missing."""
    settings = load_settings(spec.settings_cls)
    missing = [
        variable
        for dependency, variable, value in (
            ("nats", "KRONII_NATS_URL", settings.nats_url),
            ("redis", "KRONII_REDIS_URL", settings.redis_url),
            ("postgres", "KRONII_DATABASE_URL", settings.database_url),
        )
        if dependency in spec.needs and not value
    ]
    if missing:
        raise SettingsError(
            f"kronii: cannot start {spec.name}: {', '.join(missing)} is not set "
            "(`kronii up` sets it; to run a service alone, point it at your servers)"
        )
    return settings
