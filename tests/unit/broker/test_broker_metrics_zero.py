"""A fresh broker exports every labelled series at 0 (drop reasons, lease kinds, why control was
taken back, every table row) and its NATS topic and audit actions, so its dashboard reads 0 rather
than "No data" before the first lease."""

from __future__ import annotations

from kronii.broker.core.model import DropReason
from kronii.broker.core.table import ROWS
from kronii.broker.metrics import AUDIT_ACTIONS, BrokerMetrics, zero_common_series
from kronii.foundation.telemetry import CommonMetrics
from kronii.stores import subjects
from kronii.stores.metrics_zero import RUNTIME_AUDIT_ACTIONS
from prometheus_client import CollectorRegistry

from tests.metrics_samples import missing_common_zeros, samples


def test_every_drop_reason_lease_kind_signal_and_table_row_starts_at_zero() -> None:
    registry = CollectorRegistry()
    BrokerMetrics(registry)
    found = samples(registry)
    for reason in DropReason:
        assert (
            found[("kronii_broker_agent_events_dropped_total", frozenset({("reason", reason.value)}))] == 0.0
        )
    for how in ("grant", "acquire"):
        assert found[("kronii_broker_leases_total", frozenset({("how", how)}))] == 0.0
    signals = {row.signal for row in ROWS if row.signal}
    for signal in signals:
        assert found[("kronii_broker_control_taken_back_total", frozenset({("signal", signal)}))] == 0.0
    for row in ROWS:
        assert found[("kronii_broker_decisions_total", frozenset({("row", row.id)}))] == 0.0


def test_the_broker_starts_its_nats_and_audit_series_at_zero() -> None:
    registry = CollectorRegistry()
    zero_common_series(CommonMetrics("broker", registry))
    missing = missing_common_zeros(
        samples(registry),
        "broker",
        publishes=[subjects.BROKER_CONTROL],
        receives=[],
        audit_actions=[*AUDIT_ACTIONS, *RUNTIME_AUDIT_ACTIONS],
    )
    assert not missing


def test_every_audit_action_the_control_desk_writes_is_declared() -> None:
    from kronii.broker.usecases import control_session

    assert set(control_session._AUDITED.values()) <= set(AUDIT_ACTIONS)
