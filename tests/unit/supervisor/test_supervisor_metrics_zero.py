"""A fresh supervisor exports a deferred outcome for each deferral code, its NATS topics and its audit
actions at 0, so the deferral panels read 0 rather than "No data" before the first deferral."""

from __future__ import annotations

import re
from pathlib import Path

from kronii.foundation.telemetry import CommonMetrics
from kronii.stores import subjects
from kronii.stores.metrics_zero import RUNTIME_AUDIT_ACTIONS
from kronii.supervisor import metrics as supervisor_metrics
from kronii.supervisor.core.table import TABLE, Action, Signal
from kronii.supervisor.metrics import (
    AUDIT_ACTIONS,
    DEFERRAL_CODES,
    PUBLISHES,
    RECEIVES,
    SupervisorMetrics,
    zero_common_series,
)
from prometheus_client import CollectorRegistry

from tests.metrics_samples import missing_common_zeros, samples, topic_names, topics_used

SOURCE = Path(supervisor_metrics.__file__).parent


def test_fresh_registry_holds_a_deferred_outcome_for_every_deferral_code_at_zero() -> None:
    registry = CollectorRegistry()
    SupervisorMetrics(registry)
    found = samples(registry)

    for code in DEFERRAL_CODES:
        labels = frozenset({("result", "deferred"), ("error_code", code.value)})
        assert found.get(("kronii_supervisor_trigger_outcomes_total", labels)) == 0.0, code


def test_each_deferring_row_of_the_table_has_its_code_declared() -> None:
    # Each DEFER row of the table defers with one code of its own (the policy's assessment), but
    # a person's keys arriving while a prompt was typed: that defers as OPERATOR_BUSY, as admission does.
    deferring = {row.signal for row in TABLE if Action.DEFER in row.actions}
    deferring.discard(Signal.PERSON_KEYS_WHILE_TYPING)

    assert len(deferring) == len(DEFERRAL_CODES) == len(set(DEFERRAL_CODES))


def test_supervisor_starts_its_nats_and_audit_series_at_zero() -> None:
    registry = CollectorRegistry()

    zero_common_series(CommonMetrics("supervisor", registry))

    missing = missing_common_zeros(
        samples(registry),
        "supervisor",
        publishes=[subjects.SUPERVISOR_OUTCOME, subjects.SUPERVISOR_COLLISION],
        receives=[subjects.SUPERVISOR_ACK],
        audit_actions=["supervisor.trigger", "supervisor.register", *RUNTIME_AUDIT_ACTIONS],
    )
    assert not missing


def test_declared_topics_and_audit_actions_are_the_ones_the_supervisor_uses() -> None:
    # metrics.py declares the lists, so it is left out of what the code uses.
    code = "\n".join(p.read_text() for p in sorted(SOURCE.rglob("*.py")) if p.name != "metrics.py")

    assert topics_used(code) == topic_names([*PUBLISHES, *RECEIVES])
    assert set(re.findall(r'"(supervisor\.[a-z_]+)"', code)) == set(AUDIT_ACTIONS)
