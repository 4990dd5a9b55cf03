"""The sensor's Prometheus series, every known label value at 0 from the start."""

from __future__ import annotations

from kronii.runtime.service import ServiceContext
from kronii.sensor.core.model import ActivityState
from kronii.sensor.core.table import TABLE, Action, Target
from kronii.stores import subjects
from kronii.stores.metrics_zero import zero_common_series as start_at_zero
from prometheus_client import Counter, Gauge, Histogram

__all__ = ["AUDIT_ACTIONS", "EVENT_KINDS", "SensorMetrics", "possible_transitions", "zero_common_series"]

# The kinds the sensor publishes: the suffix of kronii.activity.<kind>, and the metrics' `kind` label.
EVENT_KINDS = ("state_changed", "focus_changed", "title_changed", "activity_pulse", "lock_changed")

# The audit actions the sensor appends (lock and unlock of the session; a person's delete and
# import of activity history).
AUDIT_ACTIONS = ("session.lock", "session.unlock", "sensor.activity.delete", "sensor.activity.import")


def possible_transitions() -> list[tuple[ActivityState, ActivityState]]:
    """Every (from, to) pair the transition table can emit as a StateChanged."""
    natural = [state for state in ActivityState if state is not ActivityState.LOCKED]
    pairs: list[tuple[ActivityState, ActivityState]] = []
    for row in TABLE:
        if Action.EMIT_STATE_CHANGED not in row.actions:
            continue
        targets = natural if row.to_state is Target.NATURAL else [row.to_state]
        for from_state in sorted(row.from_states, key=lambda state: state.value):
            pairs += [
                (from_state, to) for to in targets if to is not from_state and (from_state, to) not in pairs
            ]
    return pairs


def zero_common_series(ctx: ServiceContext) -> None:
    """The mesh-wide counters the sensor feeds start at 0 too: with no display it may publish
    nothing for hours, and its NATS and audit panels would read "no data" rather than 0."""
    publishes = [subjects.activity_topic(kind) for kind in EVENT_KINDS]
    start_at_zero(ctx.metrics, publishes=publishes, audit_actions=AUDIT_ACTIONS)


class SensorMetrics:
    def __init__(self, ctx: ServiceContext) -> None:
        registry = ctx.registry
        self.transitions = Counter(
            "kronii_sensor_transitions", "Activity state transitions", ["from", "to"], registry=registry
        )
        self.events_published = Counter(
            "kronii_sensor_events_published", "Activity events published", ["kind"], registry=registry
        )
        self.x11_errors = Counter("kronii_sensor_x11_errors", "X11 errors seen", registry=registry)
        self.state = Gauge(
            "kronii_sensor_state", "1 for the current activity state", ["state"], registry=registry
        )
        self.focus_latency = Histogram(
            "kronii_sensor_focus_latency_seconds",
            "From the display's focus event to the FocusChanged publish",
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
            registry=registry,
        )
        # Every known label value starts at 0, so a dashboard's rate shows 0 rather than no data
        # on a sensor that has not yet seen that transition or published that kind.
        for from_state, to_state in possible_transitions():
            self.transitions.labels(from_state.value, to_state.value)
        for kind in EVENT_KINDS:
            self.events_published.labels(kind)
        for item in ActivityState:
            self.state.labels(item.value).set(0)

    def set_state(self, state: ActivityState) -> None:
        for item in ActivityState:
            self.state.labels(item.value).set(1 if item is state else 0)
