"""The sensor's service spec, discovered by `kronii up` through the `kronii.services` entry point."""

from __future__ import annotations

from kronii.common.service import ServiceSpec
from kronii.sensor.app import SensorApp
from kronii.sensor.settings import SensorSettings

__all__ = ["SERVICE"]

SERVICE = ServiceSpec(
    name="sensor",
    settings_cls=SensorSettings,
    app_factory=SensorApp,
    order=1,
    description="activity state, focus, titles, lock",
)
