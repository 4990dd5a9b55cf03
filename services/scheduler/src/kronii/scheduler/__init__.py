"""kronii scheduler: wake-ups, cooldowns and ceilings for the pipeline."""
