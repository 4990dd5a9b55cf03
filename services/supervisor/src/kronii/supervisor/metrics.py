"""The supervisor's metrics. The five of seed 002, section 16 carry exactly the seed's names;
the rest are kronii_supervisor_*. No label carries a prompt, a path or a person's text."""

from __future__ import annotations

from kronii.supervisor.core.model import Backend, Result
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

__all__ = ["SupervisorMetrics"]

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
        # Every known label value starts at 0, so a panel or a rate shows 0 rather than no data.
        # outcomes' error codes appear on first use (a code belongs to some results only); a deferral
        # always carries one.
        for backend in Backend:
            if backend.value:
                self.delivered.labels(backend.value)
        for result in Result:
            if result is not Result.DEFERRED:
                self.outcomes.labels(result.value, "")
