"""Read a Prometheus registry back as {(sample name, labels): value}, for tests of what a fresh
service exports before it has done anything."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from kronii.stores import subjects
from kronii.stores.subjects import Topic
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def samples(registry: CollectorRegistry) -> Samples:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(generate_latest(registry).decode())
        for sample in family.samples
    }


def missing_common_zeros(
    found: Samples,
    service: str,
    *,
    publishes: Iterable[Topic[Any]],
    receives: Iterable[Topic[Any]],
    audit_actions: Iterable[str],
) -> list[str]:
    """The NATS and audit series of `service` that are absent or not 0."""
    wanted = [("kronii_bus_published_total", "subject", topic.pattern) for topic in publishes] + [
        ("kronii_bus_received_total", "subject", topic.pattern) for topic in receives
    ]
    wanted += [("kronii_audit_rows_total", "action", action) for action in audit_actions]
    return [
        f"{name}{{{label}={value!r}}}"
        for name, label, value in wanted
        if found.get((name, frozenset({("service", service), (label, value)}))) != 0.0
    ]


def topics_used(code: str) -> set[str]:
    """The names of the subjects.* topics `code` publishes, subscribes, requests or serves on."""
    call = r"(?:publish|subscribe|request|serve)\(\s*subjects\.([A-Z_]+)"
    return set(re.findall(call, code))


def topic_names(topics: Iterable[Topic[Any]]) -> set[str]:
    return {next(name for name in dir(subjects) if getattr(subjects, name) is topic) for topic in topics}
