"""What a service declares about itself. Light to import: `kronii up` and `kronii status` read specs
without loading any service's code."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Protocol

from kronii.foundation.settings import ServiceSettings, SettingsError, load_settings

__all__ = ["DependencyStatus", "Leftovers", "ServiceSpec", "checked_settings"]


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
    # "module:attribute" of a factory taking the service's settings and returning its Leftovers: what
    # the service leaves running on purpose when `kronii up` stops (the supervisor's agent sessions).
    leftovers: str = ""

    @property
    def module(self) -> str:
        return f"kronii.{self.name}"

    def app_factory(self) -> Any:
        return _resolve(self.app)

    def leftovers_of(self, settings: ServiceSettings) -> Leftovers | None:
        """What this service leaves running when the mesh stops, or None when it leaves nothing."""
        return _resolve(self.leftovers)(settings) if self.leftovers else None


class Leftovers(Protocol):
    """What a service leaves running on purpose when `kronii up` stops, for it to stop or to name."""

    def running(self) -> list[str]: ...

    def stop(self) -> list[str]: ...

    def how_to_stop(self, names: list[str]) -> str: ...


def _resolve(target: str) -> Any:
    """`module:attribute[.attribute]` imported when asked for."""
    module_name, _, path = target.partition(":")
    value: Any = importlib.import_module(module_name)
    for part in path.split("."):
        value = getattr(value, part)
    return value


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
