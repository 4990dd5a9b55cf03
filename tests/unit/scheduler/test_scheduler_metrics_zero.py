"""A fresh scheduler exports its NATS topics and audit actions at 0: its dashboard's NATS and audit
panels read 0 before the first plan or tick."""

from __future__ import annotations

import re
from pathlib import Path

from kronii.foundation.telemetry import CommonMetrics
from kronii.scheduler import metrics as scheduler_metrics
from kronii.scheduler.metrics import AUDIT_ACTIONS, PUBLISHES, RECEIVES, zero_common_series
from kronii.stores import subjects
from kronii.stores.metrics_zero import RUNTIME_AUDIT_ACTIONS
from prometheus_client import CollectorRegistry

from tests.metrics_samples import missing_common_zeros, samples, topic_names, topics_used

SOURCE = Path(scheduler_metrics.__file__).parent


def test_scheduler_starts_its_nats_and_audit_series_at_zero() -> None:
    registry = CollectorRegistry()

    zero_common_series(CommonMetrics("scheduler", registry))

    missing = missing_common_zeros(
        samples(registry),
        "scheduler",
        publishes=[subjects.SCHEDULER_TICK],
        receives=[subjects.SCHEDULER_PLAN, subjects.SCHEDULER_ADMIT],
        audit_actions=["schedule.plan", "schedule.preempt", "schedule.tick", *RUNTIME_AUDIT_ACTIONS],
    )
    assert not missing


def test_declared_topics_and_audit_actions_are_the_ones_the_scheduler_uses() -> None:
    code = "\n".join(path.read_text() for path in sorted(SOURCE.rglob("*.py")))

    assert topics_used(code) == topic_names([*PUBLISHES, *RECEIVES])
    assert set(re.findall(r'action="(schedule\.\w+)"', code)) == set(AUDIT_ACTIONS)
