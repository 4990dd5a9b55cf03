"""kronii pipeline: the orchestrator (`python -m kronii.pipeline`)."""

from kronii.pipeline.service import SERVICE
from kronii.runtime.launch import launch

launch(SERVICE)
