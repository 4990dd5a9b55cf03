"""The pipeline's Prometheus metrics, all kronii_pipeline_*. Labels are fixed codes only."""

from __future__ import annotations

from kronii.foundation.telemetry import CommonMetrics
from kronii.pipeline.core.deferral import DeferReason
from kronii.pipeline.core.intake import Admission
from kronii.pipeline.core.notices import NoticeOutcome
from kronii.pipeline.core.states import ROUND_TRIGGERS, TriggerKind
from kronii.stores import subjects
from kronii.stores.metrics_zero import zero_common_series as start_at_zero
from prometheus_client import CollectorRegistry, Counter, Histogram

__all__ = [
    "AUDIT_ACTIONS",
    "NOTICE_SOURCES",
    "PUBLISHES",
    "RECEIVES",
    "PipelineMetrics",
    "notice_source",
    "trigger_intakes",
    "zero_common_series",
]

# Requests count as published by the asker (admissions, plugin snapshots); the in-process tmux
# plugin publishes its registration and events and answers snapshots like any other plugin.
PUBLISHES = (
    subjects.NOTIFY,
    subjects.SCHEDULER_PLAN,
    subjects.SCHEDULER_ADMIT,
    subjects.PLUGIN_SNAPSHOT,
    subjects.PLUGIN_REGISTER,
    subjects.PLUGIN_EVENT,
    subjects.SUPERVISOR_OFFER_ACCEPT,
)
RECEIVES = (
    *(subjects.activity_topic(kind) for kind in subjects.ACTIVITY_EVENTS),
    subjects.PLUGIN_EVENT,
    subjects.PLUGIN_REGISTER,
    subjects.PLUGIN_SNAPSHOT,
    subjects.SCHEDULER_TICK,
    subjects.PIPELINE_TRIGGER,
    subjects.PIPELINE_NOTICE,
    subjects.BROKER_CONTROL,
)
AUDIT_ACTIONS = (
    "pipeline.defer",
    "pipeline.delete",
    "pipeline.notice",
    "pipeline.offer_accept",
    "pipeline.redaction",
    "pipeline.run",
)
# The services that send notices; any other source is counted as "other" (labels stay few).
NOTICE_SOURCES = ("critic", "supervisor")


def trigger_intakes() -> list[tuple[str, str]]:
    """Every (kind, intake) a taken trigger is counted under: locks switch the state, round triggers
    open or join a batch, and only a title change is dropped as churn."""
    pairs = [(TriggerKind.LOCK_START.value, "locked"), (TriggerKind.LOCK_END.value, "unlocked")]
    for kind in sorted(ROUND_TRIGGERS):
        pairs += [(kind.value, Admission.OPENED.value), (kind.value, Admission.MERGED.value)]
    pairs.append((TriggerKind.TITLE_CHANGED.value, Admission.DROPPED_TITLE_CHURN.value))
    return pairs


def zero_common_series(common: CommonMetrics) -> None:
    """The mesh-wide NATS and audit counters the pipeline feeds, at 0 before its first round."""
    start_at_zero(common, publishes=PUBLISHES, receives=RECEIVES, audit_actions=AUDIT_ACTIONS)


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
        self.notices = Counter(
            "kronii_pipeline_notices",
            "Notices other services composed (the critic's warnings), by source and outcome "
            "(shown, muted, duplicate, held, over_budget, invalid)",
            ["source", "outcome"],
            registry=registry,
        )
        self._start_at_zero()

    def _start_at_zero(self) -> None:
        # Every known label value starts at 0, so a panel or a rate shows 0 rather than no data.
        for source in (*NOTICE_SOURCES, "other"):
            for outcome in (*(item.value for item in NoticeOutcome), "invalid"):
                self.notices.labels(source, outcome)
        for kind, intake in trigger_intakes():
            self.triggers.labels(kind, intake)
        for decision in ("notify", "silent", "deferred", "failed"):
            self.runs.labels(decision)
        for role in ("extractor", "synthesizer", "planner", "notifier"):
            for outcome in ("ok", "invalid_output", "error"):
                self.model_calls.labels(role, outcome)
        for direction in ("in", "out"):
            self.tokens.labels(direction)
        for reason in DeferReason:
            self.deferrals.labels(reason.value)


def notice_source(source: str) -> str:
    """The label a notice's source is counted under."""
    return source if source in NOTICE_SOURCES else "other"
