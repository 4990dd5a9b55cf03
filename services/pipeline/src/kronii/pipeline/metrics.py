"""The pipeline's Prometheus metrics, all kronii_pipeline_*. Labels are fixed codes only."""

from __future__ import annotations

from kronii.pipeline.core.deferral import DeferReason
from prometheus_client import CollectorRegistry, Counter, Histogram

__all__ = ["PipelineMetrics"]


class PipelineMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.triggers = Counter(
            "kronii_pipeline_triggers",
            "Triggers taken, by kind and what intake did",
            ["kind", "intake"],
            registry=registry,
        )
        self.runs = Counter(
            "kronii_pipeline_runs", "Finished runs by decision", ["decision"], registry=registry
        )
        self.run_seconds = Histogram(
            "kronii_pipeline_run_seconds",
            "From a round's start to its end",
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
            registry=registry,
        )
        self.model_calls = Counter(
            "kronii_pipeline_model_calls",
            "Role calls by role and outcome",
            ["role", "outcome"],
            registry=registry,
        )
        self.model_fallbacks = Counter(
            "kronii_pipeline_model_fallbacks",
            "Role calls where the rules' answer was kept instead of the model's, by role and reason "
            "(timeout, unavailable, invalid_output, unredacted, overruled, bounded)",
            ["role", "reason"],
            registry=registry,
        )
        for role in ("extractor", "synthesizer", "planner", "notifier"):
            for reason in ("timeout", "unavailable", "invalid_output", "unredacted", "overruled", "bounded"):
                self.model_fallbacks.labels(role, reason)
        self.tokens = Counter(
            "kronii_pipeline_tokens", "Model tokens by direction", ["direction"], registry=registry
        )
        self.deferrals = Counter(
            "kronii_pipeline_deferrals",
            "Runs deferred, by reason (locked, red, title_churn, rate_limited, ...)",
            ["reason"],
            registry=registry,
        )
        # Every known label value starts at 0, so a panel or a rate shows 0 rather than no data.
        # triggers{kind,intake} appear on first use.
        for decision in ("notify", "silent", "deferred", "failed"):
            self.runs.labels(decision)
        for role in ("extractor", "synthesizer", "planner", "notifier"):
            for outcome in ("ok", "invalid_output", "error"):
                self.model_calls.labels(role, outcome)
        for direction in ("in", "out"):
            self.tokens.labels(direction)
        for reason in DeferReason:
            self.deferrals.labels(reason.value)
