"""What each service's /metrics shows before anything happened, and whether Prometheus' own linter
accepts it.

- every service's registry (the common metrics plus its own) passes `promtool check metrics`
  (skipped, with the reason, when promtool is missing: Debian package `prometheus`);
- labelled counters start at 0 for their known label values, so a panel shows 0, not "No data";
- `kronii_build_info` carries the service, its package version and the Python it runs on;
- `kronii_dependency_ready` carries `required`, and the service runtime's /metrics refreshes it on
  every scrape (a host agent nobody polls on /readyz still reports the truth);
- every kronii_* series that alerts.yml or a Grafana dashboard queries is exported by a service.

The registries are built in process the way the services build them; the runtime's HTTP app is
served in process with a stub service and no infrastructure.
"""

from __future__ import annotations

import json
import platform
import re
import shutil
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
import yaml
from fastapi import APIRouter
from kronii.foundation.settings import ServiceSettings
from kronii.foundation.telemetry import CommonMetrics, service_version
from kronii.runtime.service import DependencyStatus, ServiceSpec
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parents[3]
PROMETHEUS = ROOT / "deploy" / "prometheus"
DASHBOARDS = ROOT / "deploy" / "grafana" / "dashboards"


def _sensor(registry: CollectorRegistry) -> Any:
    from kronii.sensor.metrics import SensorMetrics

    return SensorMetrics(SimpleNamespace(registry=registry))  # type: ignore[arg-type]


def _capture(registry: CollectorRegistry) -> Any:
    from kronii.capture.metrics import CaptureMetrics

    return CaptureMetrics(SimpleNamespace(registry=registry))  # type: ignore[arg-type]


def _pipeline(registry: CollectorRegistry) -> Any:
    from kronii.pipeline.metrics import PipelineMetrics

    return PipelineMetrics(registry)


def _scheduler(registry: CollectorRegistry) -> Any:
    from kronii.scheduler.metrics import SchedulerMetrics

    return SchedulerMetrics(registry)


def _supervisor(registry: CollectorRegistry) -> Any:
    from kronii.supervisor.metrics import SupervisorMetrics

    return SupervisorMetrics(registry)


def _broker(registry: CollectorRegistry) -> Any:
    from kronii.broker.metrics import BrokerMetrics

    return BrokerMetrics(registry)


def _critic(registry: CollectorRegistry) -> Any:
    from kronii.critic.metrics import CriticMetrics

    return CriticMetrics(registry)


def _vision(registry: CollectorRegistry) -> Any:
    from kronii.vision.metrics import VisionMetrics

    return VisionMetrics(registry)


def _console(registry: CollectorRegistry) -> Any:
    from kronii.console.metrics import ConsoleMetrics

    return ConsoleMetrics(registry)


SERVICES: dict[str, Callable[[CollectorRegistry], Any]] = {
    "sensor": _sensor,
    "capture": _capture,
    "pipeline": _pipeline,
    "scheduler": _scheduler,
    "supervisor": _supervisor,
    "broker": _broker,
    "critic": _critic,
    "vision": _vision,
    "console": _console,
}

# Labelled counters whose label values are open-ended (routes, subjects, audit actions, operations
# times error codes, trigger kinds times intake results): they appear on first use. The sensor's start
# their known values at 0 in kronii.sensor.metrics, which tests/unit/sensor checks.
OPEN_LABEL_VALUES = {
    "kronii_http_requests",
    "kronii_bus_published",
    "kronii_bus_received",
    "kronii_audit_rows",
    "kronii_capture_access",
    "kronii_pipeline_triggers",
    "kronii_sensor_transitions",
    "kronii_sensor_events_published",
}

# promtool's lint findings accepted on purpose: seed 002, section 16 names this histogram exactly.
ACCEPTED_LINT = {
    "trigger_latency_ms metric names should not contain abbreviated units",
    "trigger_latency_ms_created metric names should not contain abbreviated units",
}


def registry_of(service: str) -> tuple[CollectorRegistry, CommonMetrics]:
    registry = CollectorRegistry()
    common = CommonMetrics(service, registry)
    SERVICES[service](registry)
    return registry, common


def exposition(service: str) -> str:
    """The service's /metrics text after one request and one readiness probe, as a scrape sees it."""
    registry, common = registry_of(service)
    common.http_requests.labels(service, "/readyz", "200").inc()
    common.http_duration.labels(service, "/readyz").observe(0.01)
    common.set_dependency("nats", True, required=True)
    return generate_latest(registry).decode()


def series_names(registry: CollectorRegistry) -> set[str]:
    """Every series name the registry can export (a labelled family counts before its first use)."""
    names = set()
    for family in registry.collect():
        if family.type == "counter":
            names.add(f"{family.name}_total")
        elif family.type == "histogram":
            names |= {f"{family.name}_bucket", f"{family.name}_sum", f"{family.name}_count"}
        else:
            names.add(family.name)
    return names


# ---- promtool ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("service", sorted(SERVICES))
def test_promtool_lint_accepts_the_services_metrics(service: str) -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool is missing: `make sysdeps` installs it (Debian package `prometheus`)")
    result = subprocess.run(
        [promtool, "check", "metrics"], input=exposition(service), capture_output=True, text=True, timeout=60
    )
    findings = {line.strip() for line in (result.stdout + result.stderr).splitlines() if line.strip()}
    assert findings <= ACCEPTED_LINT, sorted(findings - ACCEPTED_LINT)
    assert result.returncode == 0 or findings, result


# ---- what a fresh service shows ------------------------------------------------------------------------


@pytest.mark.parametrize("service", sorted(SERVICES))
def test_no_created_series_are_exported(service: str) -> None:
    """`_created` series were 31 % of what Prometheus scraped from a mesh and nothing reads them."""
    text = exposition(service)
    assert "_total" in text or "_count" in text
    assert not [line for line in text.splitlines() if "_created" in line.split("{")[0]]


@pytest.mark.parametrize("service", sorted(SERVICES))
def test_labelled_counters_start_at_zero_for_their_known_label_values(service: str) -> None:
    registry, _ = registry_of(service)
    for family in registry.collect():
        if family.type != "counter" or family.name in OPEN_LABEL_VALUES:
            continue
        # An unlabelled counter is exported at 0 from the start; a labelled one only per label set.
        totals = [s for s in family.samples if s.name == f"{family.name}_total"]
        assert totals, f"{family.name}: no series before its first event (Grafana shows No data)"
        assert all(s.value == 0 for s in totals), family.name


def test_initialised_label_values_are_the_ones_the_services_use() -> None:
    from kronii.capture.core.status import TERMINAL
    from kronii.pipeline.core.deferral import DeferReason
    from kronii.scheduler.core.rules import ADMISSION_RULES

    def values(service: str, metric: str) -> set[tuple[str, ...]]:
        registry, _ = registry_of(service)
        family = next(f for f in registry.collect() if f.name == metric)
        return {tuple(s.labels.values()) for s in family.samples if s.name.endswith("_total")}

    assert values("capture", "kronii_capture_jobs") == {(s.value,) for s in TERMINAL}
    assert values("pipeline", "kronii_pipeline_deferrals") == {(r.value,) for r in DeferReason}
    assert {("refused", rule.reason) for rule in ADMISSION_RULES} <= values(
        "scheduler", "kronii_scheduler_admits"
    )
    assert ("delivered", "") in values("supervisor", "kronii_supervisor_trigger_outcomes")
    assert ("planner", "ok") in values("pipeline", "kronii_pipeline_model_calls")


@pytest.mark.parametrize("service", sorted(SERVICES))
def test_build_info_names_the_service_its_version_and_python(service: str) -> None:
    families = {f.name: f for f in text_string_to_metric_families(exposition(service))}
    (sample,) = families["kronii_build_info"].samples
    assert sample.value == 1
    assert sample.labels == {
        "service": service,
        "version": service_version(service),
        "python": platform.python_version(),
    }
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", sample.labels["version"]), "the installed package's version"


def test_build_info_says_unknown_for_a_service_without_a_package() -> None:
    assert service_version("no-such-service") == "unknown"


def test_dependency_ready_keeps_one_series_when_required_changes() -> None:
    registry = CollectorRegistry()
    metrics = CommonMetrics("sensor", registry)
    metrics.set_dependency("display", False, required=True)
    metrics.set_dependency("display", False, required=False)
    metrics.set_dependency("lock_signals", False, required=False)
    samples = {
        (s.labels["dependency"], s.labels["required"]): s.value
        for f in registry.collect()
        if f.name == "kronii_dependency_ready"
        for s in f.samples
    }
    assert samples == {("display", "false"): 0, ("lock_signals", "false"): 0}


# ---- the runtime's /metrics, in process ---------------------------------------------------------------


class _StubSettings(ServiceSettings):
    pass


class _StubApp:
    """A service with one required and one optional dependency of its own."""

    required_ready = True

    async def start(self, ctx: Any) -> None:
        pass

    async def stop(self) -> None:
        pass

    def routers(self) -> Iterable[APIRouter]:
        return []

    def add_to_grpc(self, server: Any) -> Iterable[str]:
        return []

    def readiness(self) -> dict[str, DependencyStatus]:
        return {
            "engine": DependencyStatus(self.required_ready, "" if self.required_ready else "stopped"),
            "notifications": DependencyStatus(False, "no session bus", required=False),
        }


_STUB = _StubApp()


def stub_app_factory() -> _StubApp:
    return _STUB


def _ready_series(text: str) -> dict[tuple[str, str], float]:
    return {
        (s.labels["dependency"], s.labels["required"]): s.value
        for f in text_string_to_metric_families(text)
        if f.name == "kronii_dependency_ready"
        for s in f.samples
    }


async def test_runtime_metrics_report_readiness_with_required_on_every_scrape() -> None:
    from kronii.runtime.service import _Runtime

    spec = ServiceSpec(
        name="stubsvc",
        settings_cls=_StubSettings,
        app=f"{__name__}:stub_app_factory",
        needs=frozenset(),
    )
    runtime = _Runtime(spec, _StubSettings())
    runtime.app_started = True
    _STUB.required_ready = True
    transport = httpx.ASGITransport(app=runtime.http_app())
    async with httpx.AsyncClient(transport=transport, base_url="http://stub") as client:
        first = await client.get("/metrics")  # no /readyz before: the scrape itself probes
        assert first.status_code == 200
        assert _ready_series(first.text) == {
            ("service", "true"): 1,
            ("engine", "true"): 1,
            ("notifications", "false"): 0,
        }
        ready = await client.get("/readyz")
        assert ready.status_code == 200, "an optional dependency does not decide /readyz"
        _STUB.required_ready = False
        assert (await client.get("/readyz")).status_code == 503
        assert _ready_series((await client.get("/metrics")).text)[("engine", "true")] == 0
    families = {f.name for f in text_string_to_metric_families(first.text)}
    assert "kronii_build_info" in families


# ---- alerts and dashboards query only what the services export ----------------------------------------


def _queried_kronii_series() -> dict[str, set[str]]:
    """kronii_* identifiers in alerts.yml expressions and dashboard queries -> where."""
    exprs: list[tuple[str, str]] = []
    for group in yaml.safe_load((PROMETHEUS / "alerts.yml").read_text(encoding="utf-8"))["groups"]:
        exprs += [(f"alerts.yml/{rule['alert']}", rule["expr"]) for rule in group["rules"]]
    for path in sorted(DASHBOARDS.glob("*.json")):
        board = json.loads(path.read_text(encoding="utf-8"))
        panels = [p for top in board.get("panels", []) for p in (top, *top.get("panels", []))]
        for panel in panels:
            exprs += [
                (f"{path.name}/{panel['title']}", t["expr"]) for t in panel.get("targets", []) if "expr" in t
            ]
        for var in board.get("templating", {}).get("list", []):
            if var.get("type") == "query":
                query = var["query"]["query"] if isinstance(var["query"], dict) else var["query"]
                exprs.append((f"{path.name}/${var['name']}", query))
    found: dict[str, set[str]] = {}
    for where, expr in exprs:
        expr = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # label values are not series names
        for name in re.findall(r"(?<![\w:])(kronii_[a-zA-Z0-9_:]*)", expr):
            found.setdefault(name, set()).add(where)
    return found


def test_every_kronii_series_in_alerts_and_dashboards_is_exported_by_a_service() -> None:
    exported: set[str] = set()
    for service in SERVICES:
        exported |= series_names(registry_of(service)[0])
    queried = _queried_kronii_series()
    assert len(queried) > 20, "the parser found the queries' series"
    missing = {name: sorted(where) for name, where in queried.items() if name not in exported}
    assert not missing, missing
