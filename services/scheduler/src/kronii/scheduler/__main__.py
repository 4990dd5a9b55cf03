"""kronii scheduler: wake-ups, cooldowns and ceilings for the pipeline (`python -m kronii.scheduler`)."""

from kronii.runtime.launch import launch
from kronii.scheduler.service import SERVICE

launch(SERVICE)
