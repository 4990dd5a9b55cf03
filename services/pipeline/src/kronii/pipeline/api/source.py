"""How a route reaches PipelineOperations: through a callable, since the HTTP routes exist before
the service has started (the runtime answers 503 until then) and the facade once it has."""

from __future__ import annotations

from collections.abc import Callable

from kronii.pipeline.usecases.operations import PipelineOperations

__all__ = ["OperationsSource"]

# Returns the facade; StillStarting while the service has not started.
OperationsSource = Callable[[], PipelineOperations]
