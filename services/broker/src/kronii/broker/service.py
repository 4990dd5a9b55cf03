"""The broker's spec, discovered by `kronii up` through the `kronii.services` entry point."""

from __future__ import annotations

from kronii.broker.settings import BrokerSettings
from kronii.runtime.spec import ServiceSpec

__all__ = ["SERVICE"]

SERVICE = ServiceSpec(
    name="broker",
    settings_cls=BrokerSettings,
    app="kronii.broker.app:BrokerApp",
    order=6,
    description="an agent touches the desktop only under a lease the user granted; the user always wins",
)
