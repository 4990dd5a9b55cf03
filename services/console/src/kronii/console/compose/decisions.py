"""The Decisions page's use cases, made once at start: the pipeline's runs and controls over HTTP."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import tzinfo

from kronii.console.adapters.pipeline_api import PipelineApi
from kronii.console.adapters.timezone import person_timezone
from kronii.console.deps import ConsoleDeps
from kronii.console.usecases.show_decisions import ShowDecisions
from kronii.console.usecases.steer_decisions import SteerDecisions

__all__ = ["DecisionsState", "build"]


@dataclass(frozen=True)
class DecisionsState:
    show: ShowDecisions
    steer: SteerDecisions
    zone: tzinfo


async def build(deps: ConsoleDeps) -> DecisionsState:
    pipeline = PipelineApi(deps.services)
    return DecisionsState(
        ShowDecisions(pipeline),
        SteerDecisions(pipeline, deps.record),
        person_timezone(deps.settings.timezone),
    )
