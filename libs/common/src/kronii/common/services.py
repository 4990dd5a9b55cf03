"""Discovery of the services installed in this environment (entry point group `kronii.services`)."""

from __future__ import annotations

from importlib.metadata import entry_points

from kronii.common.spec import ServiceSpec

__all__ = ["installed_services"]


def installed_services() -> list[ServiceSpec]:
    specs: list[ServiceSpec] = []
    for entry in entry_points(group="kronii.services"):
        spec = entry.load()
        if not isinstance(spec, ServiceSpec):
            raise TypeError(f"entry point {entry.name} does not name a ServiceSpec")
        specs.append(spec)
    return sorted(specs, key=lambda spec: spec.order)
