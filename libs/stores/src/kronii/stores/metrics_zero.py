"""Every series a service knows it will feed starts at 0, so a dashboard's rate reads 0, not "no data",
on a service that has not yet published on a topic or written an audit row of some action."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kronii.foundation.telemetry import CommonMetrics
from kronii.stores.subjects import Topic

__all__ = ["RUNTIME_AUDIT_ACTIONS", "zero_common_series"]

# Audit rows the shared service runtime writes for any service (PostgreSQL back after an outage).
RUNTIME_AUDIT_ACTIONS = ("service.outage",)


def zero_common_series(
    metrics: CommonMetrics,
    *,
    publishes: Iterable[Topic[Any]] = (),
    receives: Iterable[Topic[Any]] = (),
    audit_actions: Iterable[str] = (),
) -> None:
    """Create the NATS counters of the topics the service publishes and receives (labelled by the
    topic's pattern, as the Bus counts them) and the audit counters of its actions, each at 0."""
    for topic in publishes:
        metrics.bus_published.labels(metrics.service, topic.pattern)
    for topic in receives:
        metrics.bus_received.labels(metrics.service, topic.pattern)
    for action in (*RUNTIME_AUDIT_ACTIONS, *audit_actions):
        metrics.audit_rows.labels(metrics.service, action)
