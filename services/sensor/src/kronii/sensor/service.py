"""The sensor's service spec, discovered by `kronii up` through the `kronii.services` entry point."""

from __future__ import annotations

from kronii.runtime.spec import ServiceSpec
from kronii.sensor.settings import SensorSettings

__all__ = ["SERVICE"]

SERVICE = ServiceSpec(
    name="sensor",
    settings_cls=SensorSettings,
    app="kronii.sensor.app:SensorApp",
    order=1,
    description="activity state, focus, titles, lock",
)
