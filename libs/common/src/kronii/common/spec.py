"""What a service declares about itself. Light to import: `kronii up` and `kronii status` read specs
without loading any service's code."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from kronii.common.settings import ServiceSettings

__all__ = ["DependencyStatus", "ServiceSpec"]


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
