"""What the runner is configured with and one round's working state: the batch it is about, what it
gathered (the Base snapshot, the route, plugin contents, the screenshot), what the roles answered
and the run's record as it grows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kronii.pipeline.core.budget import PluginContent
from kronii.pipeline.core.deferral import DeferReason
from kronii.pipeline.core.intake import Batch
from kronii.pipeline.core.limits import DEFAULT_CAPTURE_LIMITS, DEFAULT_RUN_LIMITS, RateLimits
from kronii.pipeline.core.roles.values import Fragment, Notification, Plan, Synthesis
from kronii.pipeline.core.router import BaseSnapshot, PluginInfo, RouteDecision
from kronii.pipeline.core.runs import RunRecord
from kronii.pipeline.core.states import RunState
from kronii.redaction import Level

__all__ = ["Round", "RunnerConfig"]


@dataclass(frozen=True, slots=True)
class RunnerConfig:
    coalesce_window_ms: int = 1_500
    title_max_changes: int = 3
    run_limits: RateLimits = DEFAULT_RUN_LIMITS
    capture_limits: RateLimits = DEFAULT_CAPTURE_LIMITS
    context_budget_tokens: int = 1_200
    max_cooldown_ms: int = 3_600_000
    defer_backoff_ms: int = 60_000
    capture_ttl_ms: int = 30_000
    role_timeout_ms: int = 60_000
    plan_horizon_ms: int = 24 * 3_600_000


@dataclass
class Round:
    run_id: str
    batch: Batch
    record: RunRecord
    state: RunState = RunState.IDLE
    base: BaseSnapshot | None = None
    decision: RouteDecision | None = None
    plugins: Sequence[PluginInfo] = ()
    plugin_contents: list[PluginContent] = field(default_factory=list)
    plugin_gathered: bool = False
    admitted: bool = False
    screenshot_id: str | None = None
    capture_job: str = ""
    capture_deadline_ms: int = 0
    redacted_base: str = ""
    level: Level | None = None
    fragments: list[Fragment] = field(default_factory=list)
    synthesis: Synthesis | None = None
    plan: Plan | None = None
    notification: Notification | None = None
    defer_reason: DeferReason | None = None
    notes: list[str] = field(default_factory=list)
    retry_after_ms: int = 0

    @property
    def app(self) -> str:
        if self.base is not None and (self.base.app or self.base.wm_class):
            return self.base.app or self.base.wm_class
        trigger = self.batch.last
        return trigger.app or trigger.wm_class or trigger.plugin_app_id or "desktop"
