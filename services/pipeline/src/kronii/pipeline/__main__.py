"""kronii pipeline: the orchestrator (`python -m kronii.pipeline`)."""

from kronii.common.spec import launch
from kronii.pipeline.service import SERVICE

launch(SERVICE)
