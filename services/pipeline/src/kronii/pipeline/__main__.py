"""kronii pipeline: the orchestrator (`python -m kronii.pipeline`)."""

from kronii.common.launch import launch
from kronii.pipeline.service import SERVICE

launch(SERVICE)
