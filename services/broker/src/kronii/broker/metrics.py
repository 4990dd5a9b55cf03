"""The broker's Prometheus metrics, all kronii_broker_*. Labels carry fixed codes only: drop
reasons, table outcomes, how a lease was taken, why control was taken back."""

from __future__ import annotations

from kronii.broker.core.model import DropReason
from kronii.broker.core.table import ROWS
from kronii.foundation.telemetry import CommonMetrics
from kronii.stores import subjects
from kronii.stores.metrics_zero import zero_common_series as start_at_zero
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

__all__ = ["AUDIT_ACTIONS", "PUBLISHES", "BrokerMetrics", "zero_common_series"]

PUBLISHES = (subjects.BROKER_CONTROL,)
AUDIT_ACTIONS = (
    "broker.grant",
    "broker.acquire",
    "broker.release",
    "broker.override",
    "broker.stop",
    "broker.pause",
    "broker.expire",
    "broker.revoke",
    "broker.unbrokered_input",
    # the person's proof of presence for a grant, and refusals at the local socket (kronii.edge)
    "broker.presence",
    "broker.connect",
)
TAKEN_BACK = (
    "user_input_override",
    "unbrokered_input",
    "stop_now",
    "safe_interrupt",
    "lease_expired",
    "viewer_attached",
    "presence_unknown",
)
LEASE_KINDS = ("grant", "acquire")


def zero_common_series(common: CommonMetrics) -> None:
    start_at_zero(common, publishes=PUBLISHES, receives=(), audit_actions=AUDIT_ACTIONS)


class BrokerMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self._revocation_metrics(registry)
        self.injection = Histogram(
            "kronii_broker_injection_seconds",
            "From an agent's input action taken off the queue to the X server having its events",
            buckets=(0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0),
            registry=registry,
        )
        self.injected = Counter(
            "kronii_broker_agent_events_injected",
            "Agent input actions that reached the desktop",
            registry=registry,
        )
        self.dropped = Counter(
            "kronii_broker_agent_events_dropped",
            "Agent input actions the broker did not let through, by reason",
            ["reason"],
            registry=registry,
        )
        self.leases = Counter(
            "kronii_broker_leases",
            "Leases given, by how (grant by the person, acquire by policy)",
            ["how"],
            registry=registry,
        )
        self.renewals = Counter(
            "kronii_broker_lease_renewals", "Leases renewed by their holder", registry=registry
        )
        self.taken_back = Counter(
            "kronii_broker_control_taken_back",
            "Leases ended against the agent's will, by why (the signal the agent got)",
            ["signal"],
            registry=registry,
        )
        self.decisions = Counter(
            "kronii_broker_decisions", "Decisions of the control table, by row", ["row"], registry=registry
        )
        self.agent_holds = Gauge(
            "kronii_broker_agent_holds_control",
            "1 while an agent holds a lease on the desktop",
            registry=registry,
        )
        self.interactive = Gauge(
            "kronii_broker_interactive",
            "1 while a person is attached (viewer, devices or the flag)",
            registry=registry,
        )
        self._start_at_zero()

    def _revocation_metrics(self, registry: CollectorRegistry) -> None:
        """How fast the person takes control back: the decision, and what reached the screen."""
        self.revocation = Histogram(
            "kronii_broker_revocation_seconds",
            "From the person's input event read off the X server to the table's decision revoking the"
            " lease (the decision; what reached the screen is kronii_broker_revocation_at_screen_seconds)",
            buckets=(0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0),
            registry=registry,
        )
        self.revocation_at_screen = Histogram(
            "kronii_broker_revocation_at_screen_seconds",
            "From the person's event that interrupted an agent's typing to the last agent event the X"
            " server took after it (0 when none), as the broker's raw-event watch saw them in order",
            buckets=(0.0, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5),
            registry=registry,
        )
        self.events_after_person = Counter(
            "kronii_broker_agent_events_after_person",
            "Agent input events the X server took after a person's event that interrupted the agent"
            " (the invariant says 0; key releases of what the agent held down are counted too)",
            registry=registry,
        )

    def _start_at_zero(self) -> None:
        """Every label the broker can use, at zero from the start (a series exists before its first event)."""
        for reason in DropReason:
            self.dropped.labels(reason.value)
        for how in LEASE_KINDS:
            self.leases.labels(how)
        for signal in TAKEN_BACK:
            self.taken_back.labels(signal)
        for row in ROWS:
            self.decisions.labels(row.id)
