"""The scheduler's service spec, discovered by `kronii up` through the `kronii.services` entry point."""

from __future__ import annotations

from kronii.runtime.spec import ServiceSpec
from kronii.scheduler.settings import SchedulerSettings

__all__ = ["SERVICE"]

# PostgreSQL only carries the audit rows (plans applied, preemptions, Ticks fired); timers,
# cooldowns and run counters live in Redis.
SERVICE = ServiceSpec(
    name="scheduler",
    settings_cls=SchedulerSettings,
    app="kronii.scheduler.app:SchedulerApp",
    order=4,
    description="wake-ups, cooldowns, global and per-app ceilings",
)
