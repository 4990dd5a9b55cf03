"""The pipeline's service spec, discovered by `kronii up` through the `kronii.services` entry point."""

from __future__ import annotations

from kronii.pipeline.settings import PipelineSettings
from kronii.runtime.spec import ServiceSpec

__all__ = ["SERVICE"]

SERVICE = ServiceSpec(
    name="pipeline",
    settings_cls=PipelineSettings,
    app="kronii.pipeline.app:PipelineApp",
    order=3,
    description="orchestration: triggers to few, well-founded suggestions",
)
