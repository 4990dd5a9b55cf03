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
PUBLISHES = (subjects.SUPERVISOR_OUTCOME, subjects.SUPERVISOR_COLLISION, subjects.PIPELINE_NOTICE)
RECEIVES = (
    subjects.SUPERVISOR_ACK,
    subjects.BROKER_CONTROL,
    subjects.SUPERVISOR_OFFER,
    subjects.SUPERVISOR_OFFER_ACCEPT,
)
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
    "supervisor.thread_blocked",
    "supervisor.thread_unblock",
    "supervisor.wake",
    "supervisor.offer",
    "supervisor.offer_accept",
)
# The orchestrator's wake reasons (core/wake_policy.py WakeReason) and what a wake ended as.
WAKE_REASONS = ("unread", "lag", "dormant", "sync")
WAKE_RESULTS = (
    "delivered",
    "deferred",
    "already_active",
    "timeout",
    "failed",
    "typed_not_submitted",
    "refused",
)
MESSAGE_KINDS = ("message", "result", "finding", "resolved", "handoff", "outcome", "sync", "blocked")


def zero_common_series(common: CommonMetrics) -> None:
    """The mesh-wide NATS and audit counters the supervisor feeds, at 0 before its first trigger."""
    start_at_zero(common, publishes=PUBLISHES, receives=RECEIVES, audit_actions=AUDIT_ACTIONS)


# A wake takes a few tenths of a second on an idle pane, and the quiet window (20 s) or more when
# a person is typing there.
WAKE_BUCKETS_SECS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120)
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
        self._orchestrator_metrics(registry)
        self._start_at_zero()

    def _orchestrator_metrics(self, registry: CollectorRegistry) -> None:
        self.wakes = Counter(
            "kronii_orchestrator_wakes",
            "Agents the orchestrator woke, by reason",
            ["reason"],
            registry=registry,
        )
        self.wake_outcomes = Counter(
            "kronii_orchestrator_wake_outcomes",
            "How the orchestrator's wakes ended (the supervisor's result; refused: it would not queue it)",
            ["result"],
            registry=registry,
        )
        self.wake_latency = Histogram(
            "kronii_orchestrator_wake_latency_seconds",
            "From the message posted to its wake's outcome (delivered: acknowledged), seconds",
            buckets=WAKE_BUCKETS_SECS,
            registry=registry,
        )
        self.thread_lag = Gauge(
            "kronii_orchestrator_thread_lag_max",
            "The most messages any agent has left unread on any thread, at the last pass",
            registry=registry,
        )
        self.threads_blocked = Gauge(
            "kronii_orchestrator_threads_blocked", "Threads the guard blocked (section 14)", registry=registry
        )
        self.thread_messages = Counter(
            "kronii_orchestrator_thread_messages",
            "Messages posted to threads, by kind",
            ["kind"],
            registry=registry,
        )
        self.offers = Counter(
            "kronii_orchestrator_offers",
            "The critic's failure offers: made (shown to the person), accepted, auto (a policy consented)",
            ["event"],
            registry=registry,
        )
        for reason in WAKE_REASONS:
            self.wakes.labels(reason)
        for result in WAKE_RESULTS:
            self.wake_outcomes.labels(result)
        for kind in MESSAGE_KINDS:
            self.thread_messages.labels(kind)
        for event in ("made", "accepted", "auto"):
            self.offers.labels(event)

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
