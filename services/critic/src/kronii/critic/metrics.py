"""The critic's Prometheus metrics, all kronii_critic_*. Labels carry fixed codes only: shells,
trigger kinds, where a redaction was made, tiers; never a command or a path."""

from __future__ import annotations

from kronii.critic.core.model import Trigger
from kronii.foundation.telemetry import CommonMetrics
from kronii.stores import subjects
from kronii.stores.metrics_zero import zero_common_series as start_at_zero
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

__all__ = ["AUDIT_ACTIONS", "PUBLISHES", "CriticMetrics", "zero_common_series"]

PUBLISHES = (subjects.PIPELINE_NOTICE, subjects.SUPERVISOR_OFFER)
AUDIT_ACTIONS = ("critic.export", "critic.mute")
SHELLS = ("bash", "zsh", "fish", "run", "pane")
REDACTED_IN = ("command", "error", "cwd")
TIERS = ("ram", "disk")
_FAST = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0)


def zero_common_series(common: CommonMetrics) -> None:
    start_at_zero(common, publishes=PUBLISHES, receives=(), audit_actions=AUDIT_ACTIONS)


class CriticMetrics:
    """Implements ports.IntakeMetrics, and counts what the other use cases do."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.events = Counter(
            "kronii_critic_events", "Commands reported, by shell", ["shell"], registry=registry
        )
        self.redacted = Counter(
            "kronii_critic_redactions",
            "Placeholders the redaction engine put in before anything was kept, by where",
            ["where"],
            registry=registry,
        )
        self.critiques = Counter(
            "kronii_critic_critiques", "Critiques produced, by trigger", ["trigger"], registry=registry
        )
        self.rule_failures = Counter(
            "kronii_critic_rule_failures",
            "Trigger rules that raised (skipped)",
            ["trigger"],
            registry=registry,
        )
        self.event_to_hint = Histogram(
            "kronii_critic_event_to_hint_seconds",
            "From a command read off the spool to its hint handed to the shell",
            buckets=_FAST,
            registry=registry,
        )
        self.embed_latency = Histogram(
            "kronii_critic_embedding_seconds",
            "From an embedding job queued to its vector stored",
            buckets=(0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
            registry=registry,
        )
        self.embed_dropped = Counter(
            "kronii_critic_embeddings_dropped",
            "Embedding jobs dropped (queue full or over time)",
            registry=registry,
        )
        self.embed_queue = Gauge("kronii_critic_embedding_queue", "Embedding jobs waiting", registry=registry)
        self.knn = Histogram(
            "kronii_critic_knn_seconds",
            "Similar-record searches, by tier",
            ["tier"],
            buckets=_FAST,
            registry=registry,
        )
        self.spool_malformed = Counter(
            "kronii_critic_spool_malformed", "Spool lines that could not be read (skipped)", registry=registry
        )
        self.model_available = Gauge(
            "kronii_critic_model_available", "1 when the embedding model loaded and its checksum matched",
            registry=registry,
        )  # fmt: skip
        for shell in SHELLS:
            self.events.labels(shell)
        for where in REDACTED_IN:
            self.redacted.labels(where)
        for kind in Trigger:
            self.critiques.labels(kind.value)
            self.rule_failures.labels(kind.value)
        for tier in TIERS:
            self.knn.labels(tier)

    # ---- ports.IntakeMetrics ---------------------------------------------------------------------

    def event_taken(self, shell: str) -> None:
        self.events.labels(shell if shell in SHELLS else "run").inc()

    def redactions(self, where: str, count: int) -> None:
        if count:
            self.redacted.labels(where).inc(count)

    def critique(self, kind: Trigger) -> None:
        self.critiques.labels(kind.value).inc()

    def rule_failed(self, kind: Trigger) -> None:
        self.rule_failures.labels(kind.value).inc()

    def hint_shown(self, seconds: float) -> None:
        self.event_to_hint.observe(seconds)

    # ---- ports.RedactionTally, and what the other use cases count ------------------------------

    def redactions_total(self) -> int:
        return int(
            sum(
                sample.value
                for family in self.redacted.collect()
                for sample in family.samples
                if sample.name.endswith("_total")
            )
        )

    def knn_seconds(self, tier: str, seconds: float) -> None:
        self.knn.labels(tier).observe(seconds)
