"""The vision engine's spec, discovered by `kronii up` through the `kronii.services` entry point."""

from __future__ import annotations

from kronii.runtime.spec import ServiceSpec
from kronii.vision.settings import VisionSettings

__all__ = ["SERVICE"]

SERVICE = ServiceSpec(
    name="vision",
    settings_cls=VisionSettings,
    app="kronii.vision.app:VisionApp",
    order=8,
    description="from what is on the screen to a safe, confirmed plan of actions, run under the person's lease",
)
