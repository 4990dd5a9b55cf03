"""The capture service's spec, discovered by `kronii up` through the `kronii.services` entry point."""

from __future__ import annotations

from kronii.capture.settings import CaptureSettings
from kronii.runtime.spec import ServiceSpec

__all__ = ["SERVICE"]

SERVICE = ServiceSpec(
    name="capture",
    settings_cls=CaptureSettings,
    app="kronii.capture.app:CaptureApp",
    order=2,
    description="on-demand window bursts, scored, redacted, encrypted at rest, read by single-use token",
)
