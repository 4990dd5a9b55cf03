"""The supervisor's metrics. The five of seed 002, section 16 carry exactly the seed's names;
the rest are kronii_supervisor_*. No label carries a prompt, a path or a person's text."""

from __future__ import annotations

from kronii.foundation.telemetry import CommonMetrics
from kronii.stores import subjects
from kronii.stores.metrics_zero import zero_common_series as start_at_zero
from kronii.supervisor.core.model import Backend, ErrorCode, Result
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

__all__ = [
    "AUDIT_ACTIONS",
    "DEFERRAL_CODES",
    "PUBLISHES",
    "RECEIVES",
    "SupervisorMetrics",
    "zero_common_series",
]

# The codes the admission policy defers with (core/policy.py `assess`, the DEFER rows of the table).
DEFERRAL_CODES = (
    ErrorCode.TRIGGER_RATE_LIMITED,
    ErrorCode.RUNTIME_PAUSED,
    ErrorCode.TRIGGER_COOLDOWN,
    ErrorCode.OPERATOR_BUSY,
    ErrorCode.AGENT_BLOCKED,
    ErrorCode.AGENT_STARTING,
    ErrorCode.AGENT_BUSY,
    ErrorCode.USER_HOLDS_DESKTOP,
    ErrorCode.TMUX_UNAVAILABLE,
)
PUBLISHES = (subjects.SUPERVISOR_OUTCOME, subjects.SUPERVISOR_COLLISION)
RECEIVES = (subjects.SUPERVISOR_ACK, subjects.BROKER_CONTROL)
AUDIT_ACTIONS = (
    "supervisor.register",
    "supervisor.deregister",
    "supervisor.pause",
    "supervisor.unpause",
    "supervisor.spawn",
    "supervisor.unblock",
    "supervisor.collision",
    "supervisor.trigger",
    "supervisor.offline",
)


def zero_common_series(common: CommonMetrics) -> None:
    """The mesh-wide NATS and audit counters the supervisor feeds, at 0 before its first trigger."""
    start_at_zero(common, publishes=PUBLISHES, receives=RECEIVES, audit_actions=AUDIT_ACTIONS)


LATENCY_BUCKETS_MS = (1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000)


class SupervisorMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.requests = Counter("trigger_requests", "Trigger requests received", registry=registry)
        self.delivered = Counter("trigger_delivered", "Triggers delivered", ["backend"], registry=registry)
        self.timeouts = Counter("trigger_timeout", "Triggers without an acknowledgement", registry=registry)
        self.fallback_resume = Counter(
            "trigger_fallback_resume", "Resume launches of the fallback chain", registry=registry
        )
        self.latency = Histogram(
            "trigger_latency_ms",
            "From the trigger request to its outcome (delivered: the acknowledged submit), milliseconds",
            buckets=LATENCY_BUCKETS_MS,
            registry=registry,
        )
        self.outcomes = Counter(
            "kronii_supervisor_trigger_outcomes",
            "Trigger outcomes by result and error code",
            ["result", "error_code"],
            registry=registry,
        )
        self.fallback_spawn = Counter(
            "kronii_supervisor_fallback_spawn", "Spawns of the fallback chain", registry=registry
        )
        self.collisions = Counter(
            "kronii_supervisor_collisions",
            "Triggers that met a person typing past the max defer",
            registry=registry,
        )
        self.typed_not_submitted = Counter(
            "kronii_supervisor_typed_not_submitted",
            "Prompts found typed but not submitted",
            registry=registry,
        )
        self.runtimes = Gauge(
            "kronii_supervisor_runtimes", "Registered runtimes", ["status"], registry=registry
        )
        self.stale = Gauge(
            "kronii_supervisor_stale_heartbeats",
            "Runtimes that heartbeat but whose last heartbeat is older than the TTL",
            registry=registry,
        )
        self.agent_states = Gauge(
            "kronii_supervisor_agent_states",
            "Live runtimes by what their screen showed at the last look "
            "(starting, idle, draft, working, blocked, exited)",
            ["state"],
            registry=registry,
        )
        self.queue_depth = Gauge(
            "kronii_supervisor_queue_depth", "Triggers queued (deferred or in flight)", registry=registry
        )
        self._start_at_zero()

    def _start_at_zero(self) -> None:
        """Every known label value starts at 0, so a panel or a rate shows 0 rather than no data.
        The other results' error codes appear on first use (a code belongs to some results only);
        a deferral always carries one of DEFERRAL_CODES."""
        for backend in Backend:
            if backend.value:
                self.delivered.labels(backend.value)
        for result in Result:
            if result is not Result.DEFERRED:
                self.outcomes.labels(result.value, "")
        for code in DEFERRAL_CODES:
            self.outcomes.labels(Result.DEFERRED.value, code.value)
