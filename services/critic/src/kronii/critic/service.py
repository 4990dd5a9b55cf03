"""The critic's spec, discovered by `kronii up` through the `kronii.services` entry point."""

from __future__ import annotations

from kronii.critic.settings import CriticSettings
from kronii.runtime.spec import ServiceSpec

__all__ = ["SERVICE"]

SERVICE = ServiceSpec(
    name="critic",
    settings_cls=CriticSettings,
    app="kronii.critic.app:CriticApp",
    order=7,
    description="every shell command remembered redacted, similar past errors found, a hint at the prompt",
)
