"""A fresh console exports its refusal reasons, login outcomes, the NATS topics it listens to and its
sign-in audit actions at 0: its dashboard's panels read 0, not "no data", before the first refusal."""

from __future__ import annotations

from kronii.console.metrics import AUDIT_ACTIONS, RECEIVES, REFUSALS, ConsoleMetrics, zero_common_series
from kronii.foundation.telemetry import CommonMetrics
from kronii.stores import subjects
from kronii.stores.metrics_zero import RUNTIME_AUDIT_ACTIONS
from prometheus_client import CollectorRegistry

from tests.metrics_samples import missing_common_zeros, samples


def test_the_console_starts_its_nats_and_audit_series_at_zero() -> None:
    registry = CollectorRegistry()
    zero_common_series(CommonMetrics("console", registry))
    missing = missing_common_zeros(
        samples(registry),
        "console",
        publishes=[],
        receives=[
            subjects.FOCUS_CHANGED,
            subjects.STATE_CHANGED,
            subjects.BROKER_CONTROL,
            subjects.CAPTURE_STATUS,
        ],
        audit_actions=["console.login", "console.refused", *RUNTIME_AUDIT_ACTIONS],
    )
    assert not missing
    assert set(RECEIVES) >= {subjects.SUPERVISOR_OUTCOME, subjects.PIPELINE_NOTICE}
    assert {"console.link", "console.login", "console.logout", "console.refused"} <= set(AUDIT_ACTIONS)
    # Each page's state changes too, as their use cases name them.
    assert {
        "console.agents.force",
        "console.control.stop",
        "console.control.approve",
        "console.captures.delete",
        "console.decisions.mute",
        "console.privacy.delete_day",
    } <= set(AUDIT_ACTIONS)


def test_every_refusal_reason_the_edge_gives_starts_at_zero() -> None:
    registry = CollectorRegistry()
    ConsoleMetrics(registry)
    found = {
        dict(labels)["reason"]
        for (name, labels), value in samples(registry).items()
        if name == "kronii_console_refusals_total" and value == 0
    }
    assert found == set(REFUSALS)
    assert {"no_session", "csrf", "misdirected", "foreign_origin", "too_large"} <= found
