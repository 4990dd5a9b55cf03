"""A fresh capture service exports its stages, access results, NATS topics and audit actions at 0,
so the capture dashboard and its access alerts read 0 before the first job or call."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import cast

from kronii.capture import metrics as capture_metrics
from kronii.capture.metrics import (
    ACCESS_OPERATIONS,
    ACCESS_RESULTS,
    AUDIT_ACTIONS,
    PUBLISHES,
    RECEIVES,
    STAGES,
    CaptureMetrics,
    zero_common_series,
)
from kronii.foundation.telemetry import CommonMetrics
from kronii.runtime.service import ServiceContext
from kronii.stores import subjects
from kronii.stores.metrics_zero import RUNTIME_AUDIT_ACTIONS
from prometheus_client import CollectorRegistry

from tests.metrics_samples import missing_common_zeros, samples, topic_names, topics_used

SOURCE = Path(capture_metrics.__file__).parent


def _source(*names: str) -> str:
    return "\n".join(
        path.read_text() for path in sorted(SOURCE.rglob("*.py")) if not names or path.name in names
    )


def test_fresh_registry_holds_every_stage_and_every_access_result_at_zero() -> None:
    registry = CollectorRegistry()
    CaptureMetrics(cast(ServiceContext, SimpleNamespace(registry=registry)))
    found = samples(registry)

    for stage in STAGES:
        assert found.get(("kronii_capture_stage_seconds_count", frozenset({("stage", stage)}))) == 0.0, stage
    for operation in ACCESS_OPERATIONS:
        for result in ("ok", "unauthenticated", "permission_denied", "resource_exhausted"):
            labels = frozenset({("operation", operation), ("result", result)})
            assert found.get(("kronii_capture_access_total", labels)) == 0.0, (operation, result)
    assert len(ACCESS_RESULTS) == len(set(ACCESS_RESULTS))


def test_capture_starts_its_nats_and_audit_series_at_zero() -> None:
    registry = CollectorRegistry()

    zero_common_series(CommonMetrics("capture", registry))

    missing = missing_common_zeros(
        samples(registry),
        "capture",
        publishes=[subjects.CAPTURE_STATUS],
        receives=[subjects.FOCUS_CHANGED, subjects.LOCK_CHANGED],
        audit_actions=["capture.connect", "capture.purge", "capture.request", *RUNTIME_AUDIT_ACTIONS],
    )
    assert not missing


def test_declared_stages_operations_and_audit_actions_are_the_ones_the_code_uses() -> None:
    # One the code uses but the lists lack would appear only on first use: no data until then.
    code = _source()
    api = _source("grpc_api.py", "http_api.py")
    stages = set(re.findall(r'stage_seconds\.labels\("(\w+)"\)', code))
    operations = set(
        re.findall(r'operation="(\w+)"', api)
        + re.findall(r'Capability\.\w+,\s*"(\w+)"', api)
        + re.findall(r'_job_access\(context,\s*"(\w+)"', api)
        + re.findall(r'call\(request,\s*"(\w+)"', api)
    )
    actions = set(re.findall(r'action="(capture\.[\w.]+)"', code))

    assert stages == set(STAGES)
    assert operations == set(ACCESS_OPERATIONS)
    assert actions <= set(AUDIT_ACTIONS)


def test_declared_topics_are_the_ones_capture_publishes_and_subscribes() -> None:
    assert topics_used(_source()) == topic_names([*PUBLISHES, *RECEIVES])
