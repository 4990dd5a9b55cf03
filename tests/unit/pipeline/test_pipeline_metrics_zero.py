"""A fresh pipeline exports every trigger (kind, intake), its NATS topics and its audit actions at 0,
so the trigger panels and KroniiPipelineRunsStopped have a series before the first trigger."""

from __future__ import annotations

import re
from pathlib import Path

from kronii.foundation.telemetry import CommonMetrics
from kronii.pipeline import metrics as pipeline_metrics
from kronii.pipeline.core.intake import Admission
from kronii.pipeline.core.states import EXTERNAL_TRIGGERS
from kronii.pipeline.metrics import (
    AUDIT_ACTIONS,
    PUBLISHES,
    RECEIVES,
    PipelineMetrics,
    trigger_intakes,
    zero_common_series,
)
from kronii.stores import subjects
from kronii.stores.metrics_zero import RUNTIME_AUDIT_ACTIONS
from prometheus_client import CollectorRegistry

from tests.metrics_samples import missing_common_zeros, samples, topic_names, topics_used

SOURCE = Path(pipeline_metrics.__file__).parent


def _code() -> str:
    return "\n".join(path.read_text() for path in sorted(SOURCE.rglob("*.py")))


def test_fresh_registry_holds_every_trigger_kind_and_intake_at_zero() -> None:
    registry = CollectorRegistry()
    PipelineMetrics(registry)
    found = samples(registry)

    for kind, intake in trigger_intakes():
        labels = frozenset({("kind", kind), ("intake", intake)})
        assert found.get(("kronii_pipeline_triggers_total", labels)) == 0.0, (kind, intake)
    for intake in ("opened", "merged", "dropped_title_churn"):
        assert any(name == "kronii_pipeline_triggers_total" and ("intake", intake) in labels
                   for name, labels in found), intake  # fmt: skip


def test_trigger_intakes_cover_every_external_kind_and_every_admission() -> None:
    pairs = trigger_intakes()

    assert {kind for kind, _ in pairs} == {kind.value for kind in EXTERNAL_TRIGGERS}
    assert {intake for _, intake in pairs} == {a.value for a in Admission} | {"locked", "unlocked"}
    assert len(pairs) == len(set(pairs))


def test_pipeline_starts_its_nats_and_audit_series_at_zero() -> None:
    registry = CollectorRegistry()

    zero_common_series(CommonMetrics("pipeline", registry))

    missing = missing_common_zeros(
        samples(registry),
        "pipeline",
        publishes=[subjects.NOTIFY, subjects.SCHEDULER_PLAN, subjects.SCHEDULER_ADMIT],
        receives=[subjects.FOCUS_CHANGED, subjects.SCHEDULER_TICK, subjects.PIPELINE_TRIGGER],
        audit_actions=["pipeline.run", "pipeline.defer", *RUNTIME_AUDIT_ACTIONS],
    )
    assert not missing


def test_declared_topics_and_audit_actions_are_the_ones_the_pipeline_uses() -> None:
    code = _code()
    activity = [subjects.activity_topic(kind) for kind in subjects.ACTIVITY_EVENTS]

    assert "subscribe_any(subjects.ACTIVITY_ALL" in code
    assert set(activity) <= set(RECEIVES)
    assert topics_used(code) == topic_names([*PUBLISHES, *RECEIVES]) - topic_names(activity)
    assert set(re.findall(r'action="(pipeline\.\w+)"', code)) == set(AUDIT_ACTIONS)
