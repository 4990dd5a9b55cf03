"""Discovery of the services installed in this environment (entry point group `kronii.services`)."""

from __future__ import annotations

from collections.abc import Mapping
from importlib.metadata import entry_points

from kronii.foundation.settings import ServiceSettings, SettingsError, load_settings
from kronii.runtime.spec import ServiceSpec

__all__ = ["installed_services", "settle_leftovers"]


def installed_services() -> list[ServiceSpec]:
    specs: list[ServiceSpec] = []
    for entry in entry_points(group="kronii.services"):
        spec = entry.load()
        if not isinstance(spec, ServiceSpec):
            raise TypeError(f"entry point {entry.name} does not name a ServiceSpec")
        specs.append(spec)
    return sorted(specs, key=lambda spec: spec.order)


def settle_leftovers(*, stop: bool, started: Mapping[str, ServiceSettings] | None = None) -> list[str]:
    """What the installed services leave running when the mesh stops (the supervisor's agent
    sessions): stopped when `stop`, else named with how to stop them. A service is read with the
    settings it `started` with (the config file may have been broken since); one that did not start,
    with its settings now. The lines to say."""
    lines = []
    for spec in installed_services():
        try:
            settings = (started or {}).get(spec.name) or load_settings(spec.settings_cls)
            leftovers = spec.leftovers_of(settings)
        except SettingsError:
            continue  # its settings were refused at start, and said so
        if leftovers is None:
            continue
        if stop:
            stopped = leftovers.stop()
            if stopped:
                lines.append(f"stopped {len(stopped)} agent session(s): {', '.join(stopped)}")
        elif running := leftovers.running():
            lines.append(leftovers.how_to_stop(running))
    return lines
