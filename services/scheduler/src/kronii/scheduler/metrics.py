"""The scheduler's Prometheus metrics, all kronii_scheduler_*. No label carries a justification or
a reason sentence: only fixed reason codes and tick kinds."""

from __future__ import annotations

from kronii.foundation.telemetry import CommonMetrics
from kronii.scheduler.core.model import TickKind
from kronii.scheduler.core.rules import ADMISSION_RULES, PREEMPTING_KINDS
from kronii.stores import subjects
from kronii.stores.metrics_zero import zero_common_series as start_at_zero
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

__all__ = ["AUDIT_ACTIONS", "PUBLISHES", "RECEIVES", "SchedulerMetrics", "zero_common_series"]

PUBLISHES = (subjects.SCHEDULER_TICK,)
RECEIVES = (subjects.SCHEDULER_PLAN, subjects.SCHEDULER_ADMIT)
AUDIT_ACTIONS = ("schedule.plan", "schedule.preempt", "schedule.tick")


def zero_common_series(common: CommonMetrics) -> None:
    """The mesh-wide NATS and audit counters the scheduler feeds, at 0 before its first tick."""
    start_at_zero(common, publishes=PUBLISHES, receives=RECEIVES, audit_actions=AUDIT_ACTIONS)


class SchedulerMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.ticks = Counter(
            "kronii_scheduler_ticks_emitted", "Ticks published on NATS", ["kind"], registry=registry
        )
        # A timestamp, not a counter's increase: a Tick fired at start, before the first scrape, is
        # still seen (an increase over the window would read 0 until the next one).
        self.last_tick = Gauge(
            "kronii_scheduler_last_tick_timestamp_seconds",
            "When the scheduler last published a Tick (Unix time)",
            registry=registry,
        )
        self.tick_lateness = Histogram(
            "kronii_scheduler_tick_lateness_seconds",
            "From a wake-up's due time to its Tick's publish",
            buckets=(0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0),
            registry=registry,
        )
        self.admits = Counter(
            "kronii_scheduler_admits",
            "Admission decisions by outcome (allowed|refused) and reason code",
            ["outcome", "reason"],
            registry=registry,
        )
        self.preemptions = Counter(
            "kronii_scheduler_preemptions",
            "Cooldowns ended early by a justified high-priority trigger",
            ["trigger_kind"],
            registry=registry,
        )
        self.plans = Counter(
            "kronii_scheduler_plans",
            "Plans received by outcome (applied|ignored|invalid); ignored: about a prompt window, not an app",
            ["outcome"],
            registry=registry,
        )
        self.pending = Gauge(
            "kronii_scheduler_pending_wakeups", "Wake-ups pending or in flight in Redis", registry=registry
        )
        self.poll_errors = Counter(
            "kronii_scheduler_poll_errors", "Failed polls of Redis for due wake-ups", registry=registry
        )
        # Every known label value starts at 0, so a panel or a rate shows 0 rather than no data.
        for kind in TickKind:
            self.ticks.labels(kind.value)
        for reason in ("admitted", "preempted_cooldown"):
            self.admits.labels("allowed", reason)
        for rule in ADMISSION_RULES:
            self.admits.labels("refused", rule.reason)
        for trigger_kind in PREEMPTING_KINDS:
            self.preemptions.labels(trigger_kind)
        for outcome in ("applied", "ignored", "invalid"):
            self.plans.labels(outcome)
