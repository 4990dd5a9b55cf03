"""A fresh sensor exposes every known series at 0, so a dashboard's rate reads 0, not "no data"."""

from __future__ import annotations

import inspect
import re
from types import SimpleNamespace
from typing import cast

from kronii.foundation.telemetry import CommonMetrics
from kronii.runtime.service import ServiceContext
from kronii.sensor.core.model import ActivityState
from kronii.sensor.metrics import EVENT_KINDS, SensorMetrics, possible_transitions, zero_common_series
from kronii.sensor.usecases.publish_activity import PublishActivity
from kronii.stores import subjects
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

_S = ActivityState


def _fresh_samples() -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    registry = CollectorRegistry()
    SensorMetrics(cast(ServiceContext, SimpleNamespace(registry=registry)))
    exposition = generate_latest(registry).decode()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(exposition)
        for sample in family.samples
    }


def test_fresh_registry_holds_every_possible_transition_at_zero() -> None:
    samples = _fresh_samples()

    for from_state, to_state in possible_transitions():
        key = (
            "kronii_sensor_transitions_total",
            frozenset({("from", from_state.value), ("to", to_state.value)}),
        )
        assert samples.get(key) == 0.0, f"{from_state.value} -> {to_state.value}"


def test_fresh_registry_holds_every_event_kind_at_zero() -> None:
    samples = _fresh_samples()

    for kind in EVENT_KINDS:
        assert samples.get(("kronii_sensor_events_published_total", frozenset({("kind", kind)}))) == 0.0, kind


def test_fresh_registry_holds_every_state_at_zero_and_the_error_counter_at_zero() -> None:
    samples = _fresh_samples()

    for state in ActivityState:
        assert samples.get(("kronii_sensor_state", frozenset({("state", state.value)}))) == 0.0, state
    assert samples.get(("kronii_sensor_x11_errors_total", frozenset())) == 0.0
    assert samples.get(("kronii_sensor_focus_latency_seconds_count", frozenset())) == 0.0


def test_possible_transitions_are_the_tables_state_changes() -> None:
    assert set(possible_transitions()) == {
        (_S.ACTIVE, _S.LOCKED),
        (_S.PASSIVE, _S.LOCKED),
        (_S.INACTIVE, _S.LOCKED),
        (_S.LOCKED, _S.ACTIVE),
        (_S.LOCKED, _S.PASSIVE),
        (_S.LOCKED, _S.INACTIVE),
        (_S.INACTIVE, _S.ACTIVE),
        (_S.PASSIVE, _S.ACTIVE),
        (_S.ACTIVE, _S.PASSIVE),
        (_S.PASSIVE, _S.INACTIVE),
    }
    assert len(possible_transitions()) == len(set(possible_transitions()))


def test_event_kinds_are_the_kinds_the_sensor_publishes() -> None:
    # A kind published but not in EVENT_KINDS would appear only on first use: no data until then.
    published = set(re.findall(r'self\._publish\(\s*"(\w+)"', inspect.getsource(PublishActivity)))

    assert published == set(EVENT_KINDS)


def test_sensor_starts_its_nats_and_audit_series_at_zero() -> None:
    registry = CollectorRegistry()
    ctx = SimpleNamespace(name="sensor", metrics=CommonMetrics("sensor", registry))

    zero_common_series(cast(ServiceContext, ctx))
    samples = {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(generate_latest(registry).decode())
        for sample in family.samples
    }

    for kind in EVENT_KINDS:
        labels = frozenset({("service", "sensor"), ("subject", subjects.activity_topic(kind).pattern)})
        assert samples.get(("kronii_bus_published_total", labels)) == 0.0, kind
    for action in ("session.lock", "session.unlock"):
        labels = frozenset({("service", "sensor"), ("action", action)})
        assert samples.get(("kronii_audit_rows_total", labels)) == 0.0, action
