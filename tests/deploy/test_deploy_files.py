"""The deployment files, checked without a Docker engine or a helm binary.

Covers the Dockerfile and .dockerignore, docker-compose.yml and its layers (deploy/compose/),
Prometheus (config, scrape targets, alert rules), the Grafana provisioning and dashboards, the
OpenTelemetry collector and the Helm chart (helm/kronii).

Always-on checks use pyyaml and jsonschema. Optional tools make some checks deeper and are
skipped, with the reason, when missing:

- helm-python-sdk (module helm_python): Helm's own Go SDK through ctypes, for `helm lint` and
  `helm template` equivalents and Helm's values-schema enforcement;
- promql-parser: a real PromQL parser, for the metric and label checks of every expression
  (without it a tokenizer finds the metric names);
- compose-spec: strict Compose Specification parsing (unknown keys are errors);
- promtool (Debian package `prometheus`): `promtool check config|rules` and the alert unit tests in
  deploy/prometheus/alerts_test.yml.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped,unused-ignore]
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
COMPOSE_LAYERS = sorted((ROOT / "deploy" / "compose").glob("*.yml"))
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
PROMETHEUS = ROOT / "deploy" / "prometheus"
GRAFANA = ROOT / "deploy" / "grafana"
OTEL = ROOT / "deploy" / "otel-collector"
CHART = ROOT / "helm" / "kronii"
OPERATIONS_DOC = ROOT / "docs" / "operations.md"
ANY_ADDRESS = "0.0.0.0"  # noqa: S104 - compared against, never bound


# ---- the mesh, as the brief and the code define it ---------------------------------------------------


@dataclass(frozen=True)
class MeshService:
    name: str
    http_port: int
    grpc_port: int
    host_agent: bool  # needs the user's desktop (display or shells): runs on the host, not in a container
    display: bool = True  # a host agent that needs the X display (the critic needs the shells instead)


MESH = {
    s.name: s
    for s in (
        MeshService("sensor", 8101, 7101, host_agent=True),
        MeshService("capture", 8102, 7102, host_agent=True),
        MeshService("pipeline", 8103, 7103, host_agent=False),
        MeshService("scheduler", 8104, 7104, host_agent=False),
        MeshService("supervisor", 8105, 7105, host_agent=False),
        MeshService("broker", 8106, 7106, host_agent=True),
        MeshService("critic", 8107, 7107, host_agent=True, display=False),
        MeshService("vision", 8108, 7108, host_agent=True),
        # The person's web page: on the host, answering only the person's uid; HTTP only.
        MeshService("console", 8109, 0, host_agent=True, display=False),
    )
}
# The host agents need the person's display: the chart deploys only the server-side tiers.
HELM_TIERS = ("pipeline", "scheduler", "supervisor")

# Prometheus metric name -> the labels the service puts on it.
COMMON_METRICS: dict[str, set[str]] = {
    "kronii_http_requests_total": {"service", "route", "status"},
    "kronii_http_request_duration_seconds": {"service", "route"},
    "kronii_bus_published_total": {"service", "subject"},
    "kronii_bus_received_total": {"service", "subject"},
    "kronii_dependency_ready": {"service", "dependency", "required"},
    "kronii_audit_rows_total": {"service", "action"},
    "kronii_build_info": {"service", "version", "python"},
}
# Exported but charted by no dashboard: an info series, for joins and `kronii_build_info == 1` look-ups.
NOT_CHARTED = {"kronii_build_info"}
SENSOR_METRICS: dict[str, set[str]] = {
    "kronii_sensor_transitions_total": {"from", "to"},
    "kronii_sensor_events_published_total": {"kind"},
    "kronii_sensor_x11_errors_total": set(),
    "kronii_sensor_state": {"state"},
    "kronii_sensor_focus_latency_seconds": set(),
}
SUPERVISOR_METRICS: dict[str, set[str]] = {
    # Seed 002, section 16 names these exactly (no kronii_ prefix).
    "trigger_requests_total": set(),
    "trigger_delivered_total": {"backend"},
    "trigger_timeout_total": set(),
    "trigger_fallback_resume_total": set(),
    "trigger_latency_ms": set(),
    "kronii_supervisor_trigger_outcomes_total": {"result", "error_code"},
    "kronii_supervisor_fallback_spawn_total": set(),
    "kronii_supervisor_collisions_total": set(),
    "kronii_supervisor_typed_not_submitted_total": set(),
    "kronii_supervisor_runtimes": {"status"},
    "kronii_supervisor_stale_heartbeats": set(),
    "kronii_supervisor_queue_depth": set(),
    "kronii_supervisor_agent_states": {"state"},
    # The activation orchestrator (issue 29), in the supervisor.
    "kronii_orchestrator_wakes_total": {"reason"},
    "kronii_orchestrator_wake_outcomes_total": {"result"},
    "kronii_orchestrator_wake_latency_seconds": set(),
    "kronii_orchestrator_thread_lag_max": set(),
    "kronii_orchestrator_threads_blocked": set(),
    "kronii_orchestrator_thread_messages_total": {"kind"},
    "kronii_orchestrator_offers_total": {"event"},
}
CAPTURE_METRICS: dict[str, set[str]] = {
    "kronii_capture_jobs_total": {"status"},
    "kronii_capture_requests_total": {"outcome"},
    "kronii_capture_jobs_active": set(),
    "kronii_capture_stage_seconds": {"stage"},
    "kronii_capture_request_to_persisted_seconds": set(),
    "kronii_capture_access_total": {"operation", "result"},
    "kronii_capture_ocr_frames_total": set(),
    "kronii_capture_purged_objects_total": {"kind"},
    "kronii_capture_socket_refused_total": {"reason"},
    "kronii_capture_breaker_opened_total": set(),
    "kronii_capture_purge_runs_total": {"outcome"},
    "kronii_capture_last_purge_timestamp_seconds": set(),
}
SCHEDULER_METRICS: dict[str, set[str]] = {
    "kronii_scheduler_ticks_emitted_total": {"kind"},
    "kronii_scheduler_last_tick_timestamp_seconds": set(),
    "kronii_scheduler_tick_lateness_seconds": set(),
    "kronii_scheduler_admits_total": {"outcome", "reason"},
    "kronii_scheduler_preemptions_total": {"trigger_kind"},
    "kronii_scheduler_plans_total": {"outcome"},
    "kronii_scheduler_pending_wakeups": set(),
    "kronii_scheduler_poll_errors_total": set(),
}
PIPELINE_METRICS: dict[str, set[str]] = {
    "kronii_pipeline_triggers_total": {"kind", "intake"},
    "kronii_pipeline_runs_total": {"decision"},
    "kronii_pipeline_run_seconds": set(),
    "kronii_pipeline_model_calls_total": {"role", "outcome"},
    "kronii_pipeline_model_fallbacks_total": {"role", "reason"},
    "kronii_pipeline_tokens_total": {"direction"},
    "kronii_pipeline_deferrals_total": {"reason"},
    "kronii_pipeline_notices_total": {"source", "outcome"},
}
BROKER_METRICS: dict[str, set[str]] = {
    "kronii_broker_revocation_seconds": set(),
    "kronii_broker_revocation_at_screen_seconds": set(),
    "kronii_broker_agent_events_after_person_total": set(),
    "kronii_broker_injection_seconds": set(),
    "kronii_broker_agent_events_injected_total": set(),
    "kronii_broker_agent_events_dropped_total": {"reason"},
    "kronii_broker_leases_total": {"how"},
    "kronii_broker_lease_renewals_total": set(),
    "kronii_broker_control_taken_back_total": {"signal"},
    "kronii_broker_decisions_total": {"row"},
    "kronii_broker_agent_holds_control": set(),
    "kronii_broker_interactive": set(),
}
CRITIC_METRICS: dict[str, set[str]] = {
    "kronii_critic_events_total": {"shell"},
    "kronii_critic_redactions_total": {"where"},
    "kronii_critic_critiques_total": {"trigger"},
    "kronii_critic_rule_failures_total": {"trigger"},
    "kronii_critic_event_to_hint_seconds": set(),
    "kronii_critic_embedding_seconds": set(),
    "kronii_critic_embeddings_dropped_total": set(),
    "kronii_critic_embedding_queue": set(),
    "kronii_critic_knn_seconds": {"tier"},
    "kronii_critic_spool_malformed_total": set(),
    "kronii_critic_model_available": set(),
}
CONSOLE_METRICS: dict[str, set[str]] = {
    "kronii_console_refusals_total": {"reason"},
    "kronii_console_logins_total": {"outcome"},
    "kronii_console_live_clients": set(),
    "kronii_console_live_dropped_total": set(),
}
VISION_METRICS: dict[str, set[str]] = {
    "kronii_vision_plans_total": {"state"},
    "kronii_vision_plan_ends_total": {"state"},
    "kronii_vision_actions_total": {"type", "outcome"},
    "kronii_vision_safety_rows_total": {"row"},
    "kronii_vision_ticks_total": {"decision"},
    "kronii_vision_context_seconds": {"part"},
    "kronii_vision_effects_total": {"effect", "seen"},
}
SERVICE_METRICS: dict[str, set[str]] = {
    **SENSOR_METRICS,
    **SUPERVISOR_METRICS,
    **CAPTURE_METRICS,
    **SCHEDULER_METRICS,
    **PIPELINE_METRICS,
    **BROKER_METRICS,
    **CRITIC_METRICS,
    **VISION_METRICS,
    **CONSOLE_METRICS,
}
HISTOGRAMS = {
    "kronii_http_request_duration_seconds",
    "kronii_sensor_focus_latency_seconds",
    "trigger_latency_ms",
    "kronii_orchestrator_wake_latency_seconds",
    "kronii_capture_stage_seconds",
    "kronii_capture_request_to_persisted_seconds",
    "kronii_scheduler_tick_lateness_seconds",
    "kronii_pipeline_run_seconds",
    "kronii_broker_revocation_seconds",
    "kronii_broker_revocation_at_screen_seconds",
    "kronii_broker_injection_seconds",
    "kronii_critic_event_to_hint_seconds",
    "kronii_critic_embedding_seconds",
    "kronii_critic_knn_seconds",
    "kronii_vision_context_seconds",
}
# Labels Prometheus adds to every scraped series (job, instance) and our targets add (targets/*.yml).
TARGET_LABELS = {"job", "instance", "component", "placement"}
# Series Prometheus makes itself.
SYNTHETIC_SERIES: dict[str, set[str] | None] = {
    "up": set(),
    "ALERTS": None,  # carries every alert's labels: anything goes
}


def _series_catalogue() -> dict[str, set[str] | None]:
    """Every series name a query may select, with its allowed labels (None: any)."""
    catalogue: dict[str, set[str] | None] = {}
    for name, labels in {**COMMON_METRICS, **SERVICE_METRICS}.items():
        if name in HISTOGRAMS:
            catalogue[f"{name}_bucket"] = labels | {"le"} | TARGET_LABELS
            catalogue[f"{name}_sum"] = labels | TARGET_LABELS
            catalogue[f"{name}_count"] = labels | TARGET_LABELS
        else:
            catalogue[name] = labels | TARGET_LABELS
    for name, synthetic in SYNTHETIC_SERIES.items():
        catalogue[name] = None if synthetic is None else synthetic | TARGET_LABELS
    return catalogue


SERIES = _series_catalogue()


def services_with_code() -> set[str]:
    """Mesh services whose package exists in the workspace (services/<name>/pyproject.toml)."""
    return {p.parent.name for p in (ROOT / "services").glob("*/pyproject.toml")} & set(MESH)


def _env_name(model: Any, field: str, prefix: str) -> str:
    from pydantic import AliasChoices

    alias = model.model_fields[field].validation_alias
    if isinstance(alias, AliasChoices) and alias.choices:
        return str(alias.choices[0])
    return f"{prefix}{field}".upper()


def _settings_variables(model: Any) -> set[str]:
    """Every KRONII_* name a settings model reads: its prefixed field names and its aliases."""
    from pydantic import AliasChoices

    prefix = str(model.model_config.get("env_prefix", ""))
    names = set()
    for field, info in model.model_fields.items():
        alias = info.validation_alias
        if isinstance(alias, AliasChoices):
            names |= {str(choice) for choice in alias.choices if str(choice).startswith("KRONII_")}
        else:
            names.add(f"{prefix}{field}".upper())
    return names


def service_settings_models() -> dict[str, Any]:
    """Mesh service -> its settings class, for the services with code (from their ServiceSpec)."""
    from importlib.metadata import entry_points

    models = {}
    for entry in entry_points(group="kronii.services"):
        if entry.name in services_with_code():
            models[entry.name] = entry.load().settings_cls
    return models


def known_kronii_variables() -> set[str]:
    """KRONII_* variables the code reads, from the settings models themselves, plus KRONII_SERVICE
    (the image's entrypoint: which `kronii.<service>` module to run). A service with code adds its own
    settings (KRONII_CAPTURE_SOCKET_DIR, ...); one without code only the common host and ports."""
    from kronii.foundation.settings import KroniiSettings, ServiceSettings

    shared = {_env_name(KroniiSettings, f, "KRONII_") for f in KroniiSettings.model_fields}
    own = [f for f in ServiceSettings.model_fields if f not in KroniiSettings.model_fields]
    per_service = {f"KRONII_{svc.upper()}_{f.upper()}" for svc in MESH for f in own}
    for model in service_settings_models().values():
        per_service |= _settings_variables(model)
    return shared | per_service | {"KRONII_SERVICE"}


# ---- helpers: YAML, compose, dockerignore, PromQL -------------------------------------------------------


def load_yaml(path: Path) -> Any:
    with path.open(encoding="utf-8") as f:
        return yaml.safe_load(f)


_INTERPOLATION = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}")


def interpolation_variables(text: str) -> set[str]:
    return {m.group("name") for m in _INTERPOLATION.finditer(text.replace("$$", ""))}


def interpolate(text: str, env: dict[str, str] | None = None) -> str:
    """Compose's ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?err}, ${VAR?err} with an empty
    environment: defaults apply, required variables get a placeholder."""
    env = env or {}

    def replace(m: re.Match[str]) -> str:
        name, op, arg = m.group("name"), m.group("op"), m.group("arg")
        if name in env:
            return env[name]
        if op in (":-", "-"):
            return arg
        return f"/placeholder/{name}"

    return _INTERPOLATION.sub(replace, text)


def load_compose(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(interpolate(path.read_text(encoding="utf-8")))
    return data


def merge_compose(base: dict[str, Any], layer: dict[str, Any]) -> dict[str, Any]:
    """The parts of Compose's merge the checks need: services are merged key by key; ports,
    volumes and extra_hosts are appended; depends_on is unioned; other keys are replaced."""
    merged: dict[str, Any] = json.loads(json.dumps(base))
    for name, svc in (layer.get("services") or {}).items():
        target = merged.setdefault("services", {}).setdefault(name, {})
        for key, value in svc.items():
            if key in ("ports", "volumes", "extra_hosts") and key in target:
                target[key] = list(target[key]) + list(value)
            elif key == "depends_on" and key in target:
                target[key] = {**_depends_on(target), **_depends_on({"depends_on": value})}
            else:
                target[key] = value
    for section in ("volumes", "networks"):
        if layer.get(section):
            merged.setdefault(section, {}).update(layer[section])
    return merged


def _depends_on(svc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    deps = svc.get("depends_on") or {}
    if isinstance(deps, list):
        return {d: {"condition": "service_started"} for d in deps}
    return {k: (v or {"condition": "service_started"}) for k, v in deps.items()}


def _environment(svc: dict[str, Any]) -> dict[str, str]:
    env = svc.get("environment") or {}
    if isinstance(env, list):
        return dict(item.split("=", 1) if "=" in item else (item, "") for item in env)
    return {k: "" if v is None else str(v) for k, v in env.items()}


def kronii_services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Compose services that run a kronii mesh service (their environment names one)."""
    return {
        name: svc
        for name, svc in compose["services"].items()
        if _environment(svc).get("KRONII_SERVICE") in MESH
    }


def _published(port: Any) -> tuple[str, int, int] | None:
    """(host ip, host port, container port) of a short or long port entry."""
    if isinstance(port, dict):
        if "published" not in port:
            return None
        return str(port.get("host_ip", ANY_ADDRESS)), int(port["published"]), int(port["target"])
    parts = str(port).split("/")[0].split(":")
    if len(parts) == 3:
        return parts[0], int(parts[1]), int(parts[2])
    if len(parts) == 2:
        return ANY_ADDRESS, int(parts[0]), int(parts[1])
    return None


def _glob_regex(pattern: str) -> re.Pattern[str]:
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        elif pattern[i] == "[":
            j = pattern.index("]", i)
            out, i = out + pattern[i : j + 1], j + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out + r"\Z")


def dockerignore_excludes(path: str, patterns: list[str]) -> bool:
    """Docker's rule: the last matching pattern wins; a pattern matching a folder matches its contents."""
    parents = ["/".join(path.split("/")[: i + 1]) for i in range(path.count("/") + 1)]
    excluded = False
    for raw in patterns:
        negate = raw.startswith("!")
        regex = _glob_regex(raw[1:].strip("/") if negate else raw.strip("/"))
        if any(regex.match(p) for p in parents):
            excluded = not negate
    return excluded


def _promql_for_parsing(expr: str) -> str:
    """Grafana variables replaced by values a PromQL parser accepts."""
    expr = expr.replace("$__rate_interval", "5m").replace("$__interval", "1m").replace("$__range", "1h")
    return re.sub(r"\$\{?([A-Za-z_]\w*)(?::\w+)?\}?", ".*", expr)


@dataclass(frozen=True)
class Selector:
    name: str
    labels: frozenset[str]


_PROMQL_KEYWORDS = {
    "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless",
    "offset", "atan2", "inf", "nan",
}  # fmt: skip


def promql_selectors(expr: str) -> tuple[list[Selector], set[str]]:
    """The series selected by an expression and the labels its by/without/on/ignoring clauses name."""
    text = _promql_for_parsing(expr)
    try:
        import promql_parser  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return _promql_selectors_by_tokens(text)
    ast = promql_parser.parse(text)
    selectors: list[Selector] = []
    grouping: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, promql_parser.VectorSelector):
            labels = frozenset(m.name for m in node.matchers.matchers if m.name != "__name__")
            selectors.append(Selector(node.name or "", labels))
        elif isinstance(node, promql_parser.AggregateExpr) and node.modifier is not None:
            grouping.update(node.modifier.labels)
        elif isinstance(node, promql_parser.BinaryExpr) and node.modifier is not None:
            matching = node.modifier.matching
            if matching is not None:
                grouping.update(matching.labels)
            grouping.update(node.modifier.group_labels or [])

    promql_parser.walk(ast, visit)
    return selectors, grouping


def _promql_selectors_by_tokens(text: str) -> tuple[list[Selector], set[str]]:
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)
    grouping: set[str] = set()
    for m in re.finditer(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)", text):
        grouping.update(label.strip() for label in m.group(1).split(",") if label.strip())
    text = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    selectors = []
    for m in re.finditer(r"(?<![\w.])([A-Za-z_:][\w:]*)\s*(\{[^}]*\})?\s*(\()?", text):
        name, matchers, call = m.group(1), m.group(2), m.group(3)
        if call or name in _PROMQL_KEYWORDS:
            continue
        labels = frozenset(re.findall(r"([A-Za-z_]\w*)\s*(?:=~|!~|!=|=)", matchers or ""))
        selectors.append(Selector(name, labels))
    return selectors, grouping


def unknown_series_and_labels(expr: str) -> list[str]:
    """Problems with one expression: series not in the catalogue, labels the series does not carry."""
    problems = []
    selectors, grouping = promql_selectors(expr)
    if not selectors:
        problems.append("selects no series")
    allowed_grouping = set(TARGET_LABELS) | {"le"}
    for sel in selectors:
        if sel.name not in SERIES:
            problems.append(f"unknown series {sel.name!r}")
            continue
        labels = SERIES[sel.name]
        if labels is None:
            allowed_grouping |= set(sel.labels)
            continue
        allowed_grouping |= labels
        unknown = set(sel.labels) - labels
        if unknown:
            problems.append(f"{sel.name} has no label(s) {sorted(unknown)}")
    stray = grouping - allowed_grouping
    if stray and not any(SERIES.get(s.name) is None for s in selectors):
        problems.append(f"grouping by label(s) no selected series carries: {sorted(stray)}")
    return problems


def dashboards() -> list[Path]:
    return sorted((GRAFANA / "dashboards").glob("*.json"))


def dashboard_panels(board: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for panel in board.get("panels", []):
        yield panel
        yield from panel.get("panels", [])


def dashboard_exprs(board: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for panel in dashboard_panels(board):
        for target in panel.get("targets", []):
            if "expr" in target:
                yield f"{board['uid']}/{panel['title']}/{target.get('refId')}", target["expr"]
    for var in board.get("templating", {}).get("list", []):
        if var.get("type") == "query":
            query = var["query"]["query"] if isinstance(var["query"], dict) else var["query"]
            m = re.fullmatch(r"label_values\((?:(?P<expr>.+),\s*)?(?P<label>\w+)\)", query.strip())
            assert m, f"{board['uid']}: variable {var['name']}: unexpected query {query!r}"
            if m.group("expr"):
                yield f"{board['uid']}/${var['name']}", m.group("expr")


def alert_rules() -> list[dict[str, Any]]:
    return [rule for group in load_yaml(PROMETHEUS / "alerts.yml")["groups"] for rule in group["rules"]]


def documented(metric: str, doc: str) -> bool:
    """The doc names the metric in backticks, alone or with its labels (`name{label,...}`)."""
    return re.search(r"`" + re.escape(metric) + r"(\{[^`}]*\})?`", doc) is not None


def doc_headings() -> set[str]:
    return {
        m.group(1).strip()
        for m in re.finditer(r"^#{1,6}\s+(.+)$", OPERATIONS_DOC.read_text(encoding="utf-8"), re.M)
    }


# ---- Dockerfile and .dockerignore ---------------------------------------------------------------------


def dockerfile_instructions() -> list[tuple[str, str]]:
    text = DOCKERFILE.read_text(encoding="utf-8")
    text = re.sub(r"\\\n", " ", text)
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        keyword, _, rest = line.partition(" ")
        out.append((keyword.upper(), rest.strip()))
    return out


def dockerfile_stages() -> list[list[tuple[str, str]]]:
    stages: list[list[tuple[str, str]]] = []
    for keyword, rest in dockerfile_instructions():
        if keyword == "FROM":
            stages.append([])
        if stages:
            stages[-1].append((keyword, rest))
    return stages


PINNED_BASE = re.compile(r"python:3\.11-slim@sha256:[0-9a-f]{64}")


def test_dockerfile_builds_every_stage_from_python_311_slim_pinned_by_digest() -> None:
    global_args = {}
    for keyword, rest in dockerfile_instructions():
        if keyword == "FROM":
            break
        if keyword == "ARG" and "=" in rest:
            key, value = rest.split("=", 1)
            global_args[key] = value
    stages = dockerfile_stages()
    assert len(stages) >= 2, "multi-stage: a build stage and a runtime stage"
    for stage in stages:
        image = stage[0][1].split()[0]
        image = re.sub(r"\$\{?(\w+)\}?", lambda m: global_args.get(m.group(1), m.group(0)), image)
        assert PINNED_BASE.fullmatch(image), f"stage built from {image}: python:3.11-slim@sha256:<digest>"


def _healthcheck() -> tuple[list[str], str]:
    """The runtime stage's HEALTHCHECK: its options and its exec-form command."""
    checks = [rest for keyword, rest in dockerfile_stages()[-1] if keyword == "HEALTHCHECK"]
    assert len(checks) == 1, "the runtime stage has one HEALTHCHECK"
    options, _, command = checks[0].partition("CMD ")
    return options.split(), command.strip()


def test_dockerfile_healthcheck_asks_the_services_readyz() -> None:
    options, command = _healthcheck()
    flags = dict(option.lstrip("-").split("=", 1) for option in options)
    assert set(flags) >= {"interval", "timeout", "start-period", "retries"}, flags
    argv = json.loads(command)
    assert argv[0] == "/app/.venv/bin/python", "the image has no curl or wget: the venv's python asks"
    assert "/readyz" in argv[-1] and "KRONII_SERVICE" in argv[-1]


@pytest.mark.parametrize(("status", "healthy"), [(200, True), (503, False)])
def test_dockerfile_healthcheck_follows_readyz_on_the_configured_port(
    status: int, healthy: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check's own code, run against a stand-in /readyz on the port the settings name."""
    import sys
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    asked: list[str] = []

    class Readyz(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            self.send_response(status)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Readyz)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("KRONII_")}
        env.update(
            KRONII_SERVICE="scheduler",
            KRONII_SCHEDULER_HOST=ANY_ADDRESS,
            KRONII_SCHEDULER_HTTP_PORT=str(server.server_address[1]),
        )
        argv = json.loads(_healthcheck()[1])
        result = subprocess.run(
            [sys.executable, *argv[1:]], env=env, capture_output=True, text=True, timeout=60
        )
    finally:
        server.shutdown()
        server.server_close()
    assert asked == ["/readyz"], result.stderr
    assert (result.returncode == 0) is healthy, result.stderr


def test_dockerfile_installs_the_locked_workspace_into_app_venv_without_dev_tools() -> None:
    runs = [rest for keyword, rest in dockerfile_instructions() if keyword == "RUN"]
    syncs = [r for r in runs if "uv sync" in r]
    assert syncs, "uv sync installs the workspace"
    for sync in syncs:
        for flag in ("--frozen", "--no-dev", "--all-packages"):
            assert flag in sync, f"{flag} missing from: {sync}"
    assert any("--no-editable" in s for s in syncs), "the runtime venv must not point into /app sources"
    envs = " ".join(rest for keyword, rest in dockerfile_instructions() if keyword == "ENV")
    assert "UV_PROJECT_ENVIRONMENT=/app/.venv" in envs
    runtime = dockerfile_stages()[-1]
    copies = [rest for keyword, rest in runtime if keyword == "COPY"]
    assert copies == ["--from=build /app/.venv /app/.venv"], (
        "the runtime stage gets the venv and nothing else"
    )


def test_dockerfile_runtime_runs_as_uid_10001_and_starts_the_configured_service() -> None:
    runtime = dockerfile_stages()[-1]
    users = [rest for keyword, rest in runtime if keyword == "USER"]
    assert users and users[-1].split(":")[0] == "10001"
    assert any(k == "ARG" and r.startswith("KRONII_SERVICE") for k, r in runtime)
    assert any(k == "ENV" and "KRONII_SERVICE=${KRONII_SERVICE}" in r for k, r in runtime)
    entrypoints = [rest for keyword, rest in runtime if keyword == "ENTRYPOINT"]
    assert len(entrypoints) == 1
    argv = json.loads(entrypoints[0])
    command = " ".join(argv)
    assert "exec /app/.venv/bin/python -m" in command and "kronii.${KRONII_SERVICE}" in command


def test_dockerfile_bakes_no_secrets() -> None:
    secretish = re.compile(r"(PASSWORD|SECRET|TOKEN|API_KEY|PRIVATE|_URL)\b", re.I)
    for keyword, rest in dockerfile_instructions():
        if keyword in ("ENV", "ARG", "LABEL"):
            for name in re.findall(r"([A-Za-z_][A-Za-z0-9_]*)=", rest) or [rest.split()[0]]:
                assert not secretish.search(name), f"{keyword} {name} in the image"
        if keyword in ("COPY", "ADD"):
            assert not re.search(r"\.env\b|\.pem\b|\.key\b|id_rsa", rest), f"{keyword} {rest}"


def test_dockerignore_sends_sources_and_lock_but_no_local_state_or_secrets() -> None:
    patterns = [
        line.strip()
        for line in DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    needed = ["pyproject.toml", "uv.lock"]
    for member in sorted(
        [*(ROOT / "libs").glob("*/pyproject.toml"), *(ROOT / "services").glob("*/pyproject.toml")]
    ):
        rel = member.parent.relative_to(ROOT).as_posix()
        needed.append(f"{rel}/pyproject.toml")
        needed += [p.relative_to(ROOT).as_posix() for p in (member.parent / "src").rglob("*.py")][:20]
    for path in needed:
        assert not dockerignore_excludes(path, patterns), f"{path} must reach the build"
    for path in [
        ".git/config", ".venv/bin/python", ".env", "libs/stores/.env", "services/sensor/.env.local",
        "tests/unit/test_x.py", "libs/stores/src/kronii/stores/__pycache__/x.cpython-311.pyc",
        "services/sensor/.venv/lib/x.py", "libs/api/server.key", "bench/results/r.json", "docs/x.md",
    ]:  # fmt: skip
        assert dockerignore_excludes(path, patterns), f"{path} must not reach the build"


# Tags that name no fixed build: `latest`, and llama.cpp's `server`, rebuilt on every commit.
FLOATING_TAGS = {"latest", "server"}


def floating_image_problem(image: str) -> str | None:
    """Why an image reference may pull different bytes tomorrow, or None when its tag is pinned."""
    reference = image.split("@", 1)[0]
    last = reference.rsplit("/", 1)[-1]
    tag = last.rsplit(":", 1)[1] if ":" in last else ""
    if not tag:
        return "no tag (Docker pulls `latest`)"
    if tag in FLOATING_TAGS:
        return f"the floating tag {tag!r}"
    return None


@pytest.mark.parametrize(
    ("image", "floats"),
    [
        ("ghcr.io/ggml-org/llama.cpp:server", True),
        ("ghcr.io/ggml-org/llama.cpp:server-b8840", False),
        ("redis", True),
        ("localhost:5000/redis", True),
        ("redis:latest", True),
        ("redis:7@sha256:" + "a" * 64, False),
        ("localhost:5000/redis:7", False),
    ],
)
def test_floating_image_check_tells_pinned_tags_from_floating_ones(image: str, floats: bool) -> None:
    assert (floating_image_problem(image) is not None) is floats


# ---- docker compose -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return load_compose(COMPOSE)


@pytest.fixture(scope="module")
def compose_all_layers(compose: dict[str, Any]) -> dict[str, Any]:
    merged = compose
    for layer in COMPOSE_LAYERS:
        merged = merge_compose(merged, load_compose(layer))
    return merged


def test_compose_files_parse_and_every_service_has_a_pinned_image_or_a_build(
    compose_all_layers: dict[str, Any],
) -> None:
    assert compose_all_layers["services"]
    for name, svc in compose_all_layers["services"].items():
        assert "image" in svc or "build" in svc, f"{name}: neither image nor build"
        if "build" in svc:
            context = ROOT / svc["build"].get("context", ".")
            assert (context / svc["build"].get("dockerfile", "Dockerfile")).is_file(), name
        else:
            problem = floating_image_problem(svc["image"])
            assert problem is None, f"{name}: image {svc['image']}: {problem}"


# Service attributes of the Compose Specification (a subset is enough to catch a misspelt key).
COMPOSE_SERVICE_KEYS = {
    "annotations", "attach", "blkio_config", "build", "cap_add", "cap_drop", "cgroup", "cgroup_parent",
    "command", "configs", "container_name", "cpu_count", "cpu_percent", "cpu_period", "cpu_quota",
    "cpu_rt_period", "cpu_rt_runtime", "cpu_shares", "cpus", "cpuset", "credential_spec", "depends_on",
    "deploy", "develop", "device_cgroup_rules", "devices", "dns", "dns_opt", "dns_search", "domainname",
    "entrypoint", "env_file", "environment", "expose", "extends", "external_links", "extra_hosts",
    "gpus", "group_add", "healthcheck", "hostname", "image", "init", "ipc", "isolation", "labels",
    "links", "logging", "mac_address", "mem_limit", "mem_reservation", "mem_swappiness", "memswap_limit",
    "network_mode", "networks", "oom_kill_disable", "oom_score_adj", "pid", "pids_limit", "platform",
    "ports", "privileged", "profiles", "pull_policy", "read_only", "restart", "runtime", "scale",
    "secrets", "security_opt", "shm_size", "stdin_open", "stop_grace_period", "stop_signal",
    "storage_opt", "sysctls", "tmpfs", "tty", "ulimits", "user", "userns_mode", "uts", "volumes",
    "volumes_from", "working_dir",
}  # fmt: skip


def test_compose_services_use_only_compose_specification_keys(compose_all_layers: dict[str, Any]) -> None:
    for name, svc in compose_all_layers["services"].items():
        unknown = {k for k in svc if not k.startswith("x-")} - COMPOSE_SERVICE_KEYS
        assert not unknown, f"{name}: unknown keys {sorted(unknown)}"
    for key in compose_all_layers:
        assert key in (
            "name",
            "services",
            "volumes",
            "networks",
            "configs",
            "secrets",
            "include",
        ) or key.startswith("x-")


def test_compose_files_follow_the_compose_specification() -> None:
    import compose_spec  # a dev dependency: make test installs it

    for path in [COMPOSE, *COMPOSE_LAYERS]:
        text = interpolate(path.read_text(encoding="utf-8"))
        # compose-spec knows IP addresses only; Docker's host-gateway is the docker0 address.
        text = text.replace(":host-gateway", ":172.17.0.1")
        parsed = compose_spec.PyOptions(apply_merge=True).from_yaml(text)
        parsed.validate()


def test_every_depends_on_target_is_a_defined_service_with_what_its_condition_needs(
    compose_all_layers: dict[str, Any],
) -> None:
    services = compose_all_layers["services"]
    for name, svc in services.items():
        for target, spec in _depends_on(svc).items():
            assert target in services, f"{name} depends on undefined service {target}"
            condition = spec.get("condition", "service_started")
            assert condition in ("service_started", "service_healthy", "service_completed_successfully")
            if condition == "service_healthy":
                assert "healthcheck" in services[target], (
                    f"{name} waits for {target} to be healthy: no healthcheck"
                )
            if condition == "service_completed_successfully":
                assert services[target].get("restart") == "no", f"{target} is one-shot"


def test_every_kronii_service_waits_for_the_migrations_and_the_infrastructure(
    compose: dict[str, Any],
) -> None:
    migrate = compose["services"]["migrate"]
    assert migrate["entrypoint"] == ["/app/.venv/bin/kronii"] and migrate["command"] == ["migrate"]
    assert _depends_on(migrate)["postgres"]["condition"] == "service_healthy"
    for name, svc in kronii_services(compose).items():
        deps = _depends_on(svc)
        assert deps.get("migrate", {}).get("condition") == "service_completed_successfully", name
        for infra in ("nats", "redis", "postgres"):
            assert deps.get(infra, {}).get("condition") == "service_healthy", f"{name} -> {infra}"


def test_compose_ports_do_not_collide_and_bind_loopback_only(compose_all_layers: dict[str, Any]) -> None:
    claimed: Counter[int] = Counter()
    for name, svc in compose_all_layers["services"].items():
        if svc.get("network_mode") == "host":
            env = _environment(svc)
            kronii = env["KRONII_SERVICE"].upper()
            for kind in ("HTTP_PORT", "GRPC_PORT"):
                claimed[int(env[f"KRONII_{kronii}_{kind}"])] += 1
            assert "ports" not in svc, f"{name}: host networking publishes nothing"
            continue
        for port in svc.get("ports", []):
            published = _published(port)
            assert published, f"{name}: publish ports as host_ip:published:target ({port})"
            ip, host_port, _ = published
            assert ip == "127.0.0.1", f"{name} publishes {host_port} on {ip}: loopback only"
            claimed[host_port] += 1
    collisions = {port: n for port, n in claimed.items() if n > 1}
    assert not collisions, f"host ports claimed more than once: {collisions}"


def test_kronii_services_use_the_mesh_ports_and_bind_where_they_are_reachable(
    compose: dict[str, Any],
) -> None:
    found = {}
    for name, svc in kronii_services(compose).items():
        env = _environment(svc)
        mesh = MESH[env["KRONII_SERVICE"]]
        found[mesh.name] = name
        prefix = f"KRONII_{mesh.name.upper()}_"
        assert int(env[prefix + "HTTP_PORT"]) == mesh.http_port, name
        assert int(env[prefix + "GRPC_PORT"]) == mesh.grpc_port, name
        healthcheck = " ".join(svc["healthcheck"]["test"])
        assert f":{mesh.http_port}/readyz" in healthcheck, (
            f"{name}: healthcheck asks /readyz on the HTTP port"
        )
        if mesh.host_agent:
            assert svc.get("network_mode") == "host", f"{name} needs the host's desktop and network"
            if mesh.display:
                assert "/tmp/.X11-unix:/tmp/.X11-unix:ro" in svc["volumes"], name
            assert env[prefix + "HOST"] != ANY_ADDRESS, f"{name} must not listen on every interface"
        else:
            assert env[prefix + "HOST"] == ANY_ADDRESS, f"{name} must listen beyond the container's loopback"
            published = {_published(p)[1:] for p in svc["ports"]}  # type: ignore[index]
            assert published == {(mesh.http_port, mesh.http_port), (mesh.grpc_port, mesh.grpc_port)}, name
    assert set(found) == set(MESH), f"compose defines no service for {set(MESH) - set(found)}"


def test_compose_environment_uses_only_known_kronii_variables(compose_all_layers: dict[str, Any]) -> None:
    known = known_kronii_variables()
    documented = {
        "KRONII_NATS_URL",
        "KRONII_REDIS_URL",
        "KRONII_DATABASE_URL",
        "KRONII_DATA_DIR",
        "KRONII_LOG_LEVEL",
    }
    documented |= {f"KRONII_{s.upper()}_{k}" for s in MESH for k in ("HTTP_PORT", "GRPC_PORT", "HOST")}
    assert documented <= known, f"settings no longer read {sorted(documented - known)}"
    for name, svc in compose_all_layers["services"].items():
        for variable in _environment(svc):
            if variable.startswith("KRONII_"):
                assert variable in known, f"{name}: {variable} is not a kronii setting"
    for name, svc in kronii_services(compose_all_layers).items():
        env = _environment(svc)
        for url in (
            "KRONII_NATS_URL",
            "KRONII_REDIS_URL",
            "KRONII_DATABASE_URL",
            "OTEL_EXPORTER_OTLP_ENDPOINT",
        ):
            assert env.get(url), f"{name}: {url} unset"
        assert env["KRONII_DATABASE_URL"].startswith("postgresql+psycopg://"), name


def test_only_services_with_code_run_outside_the_future_profile(compose: dict[str, Any]) -> None:
    with_code = services_with_code()
    assert "sensor" in with_code
    for name, svc in kronii_services(compose).items():
        mesh = MESH[_environment(svc)["KRONII_SERVICE"]]
        profiles = svc.get("profiles", [])
        if mesh.name in with_code:
            assert "future" not in profiles, f"{name} exists as code: take it out of the `future` profile"
            expected = ["host"] if mesh.host_agent else []
            assert profiles == expected, f"{name}: profiles {profiles}, expected {expected}"
        else:
            assert profiles == ["future"], f"{name} has no code yet: it belongs in the `future` profile only"
    default = [n for n, s in compose["services"].items() if not s.get("profiles")]
    assert "migrate" in default


def test_kronii_containers_are_read_only_unprivileged_and_non_root(compose: dict[str, Any]) -> None:
    for name, svc in {**kronii_services(compose), "migrate": compose["services"]["migrate"]}.items():
        assert svc.get("read_only") is True, name
        assert svc.get("cap_drop") == ["ALL"], name
        assert "no-new-privileges:true" in svc.get("security_opt", []), name
        user = str(svc.get("user", "")).split(":")[0]
        assert user and user not in ("0", "root"), f"{name} runs as {user or 'the image default'}"
        assert svc["image"] == compose["services"]["migrate"]["image"], "one image for every kronii service"


def test_compose_bind_mounts_point_at_files_in_the_repository(compose_all_layers: dict[str, Any]) -> None:
    # Compose resolves relative paths of every -f file against the first file's folder: the root.
    for name, svc in compose_all_layers["services"].items():
        for volume in svc.get("volumes", []):
            source = volume["source"] if isinstance(volume, dict) else str(volume).split(":")[0]
            if source.startswith("./"):
                assert (ROOT / source).exists(), f"{name} mounts missing {source}"


def test_compose_interpolation_variables_are_documented() -> None:
    doc = OPERATIONS_DOC.read_text(encoding="utf-8")
    for path in [COMPOSE, *COMPOSE_LAYERS]:
        for variable in interpolation_variables(path.read_text(encoding="utf-8")):
            assert f"`{variable}`" in doc, (
                f"{path.name}: ${{{variable}}} is not documented in docs/operations.md"
            )


# ---- Prometheus ---------------------------------------------------------------------------------------


def scrape_targets() -> dict[str, dict[str, Any]]:
    """component -> {"target": host:port, "labels": ...} from prometheus/targets/*.yml."""
    out = {}
    for path in sorted((PROMETHEUS / "targets").glob("*.yml")):
        groups = load_yaml(path)
        assert isinstance(groups, list) and groups, path
        for group in groups:
            assert len(group["targets"]) == 1, f"{path.name}: one target per service"
            component = group["labels"]["component"]
            assert component not in out, f"{component} listed twice"
            out[component] = {"target": group["targets"][0], "labels": group["labels"], "file": path.stem}
    return out


def test_prometheus_config_scrapes_the_kronii_targets_and_loads_the_alert_rules() -> None:
    config = load_yaml(PROMETHEUS / "prometheus.yml")
    jobs = [job["job_name"] for job in config["scrape_configs"]]
    assert len(jobs) == len(set(jobs)), "job names are unique"
    for rule_file in config["rule_files"]:
        assert (PROMETHEUS / rule_file).is_file(), rule_file
    kronii = next(job for job in config["scrape_configs"] if job["job_name"] == "kronii")
    assert kronii.get("metrics_path", "/metrics") == "/metrics"
    patterns = [f for sd in kronii["file_sd_configs"] for f in sd["files"]]
    assert any(list(PROMETHEUS.glob(p)) for p in patterns), "the target files exist"
    collector = next(job for job in config["scrape_configs"] if job["job_name"] == "otel-collector")
    otel = load_yaml(OTEL / "config.yaml")
    port = otel["service"]["telemetry"]["metrics"]["readers"][0]["pull"]["exporter"]["prometheus"]["port"]
    assert collector["static_configs"][0]["targets"] == [f"otel-collector:{port}"]


def test_every_service_with_code_has_one_scrape_target_on_its_http_port() -> None:
    targets = scrape_targets()
    assert set(targets) == services_with_code(), "one targets/<service>.yml per service that exists as code"
    for component, target in targets.items():
        mesh = MESH[component]
        assert target["file"] == component
        if mesh.host_agent:
            assert target["target"] == f"host.docker.internal:{mesh.http_port}"
            assert target["labels"]["placement"] == "host"
        else:
            assert target["target"] == f"{component}:{mesh.http_port}"
            assert target["labels"]["placement"] == "container"


def test_prometheus_reaches_host_agents_through_host_gateway(compose: dict[str, Any]) -> None:
    assert "host.docker.internal:host-gateway" in compose["services"]["prometheus"]["extra_hosts"]
    mounts = compose["services"]["prometheus"]["volumes"]
    assert "./deploy/prometheus:/etc/prometheus:ro" in mounts


def test_alert_rules_are_named_uniquely_with_severity_summary_and_a_runbook_section() -> None:
    rules = alert_rules()
    names = [r["alert"] for r in rules]
    assert len(names) == len(set(names))
    headings = doc_headings()
    for rule in rules:
        assert rule["labels"]["severity"] in ("critical", "warning", "info"), rule["alert"]
        assert rule["annotations"]["summary"] and rule["annotations"]["description"], rule["alert"]
        assert rule["annotations"]["runbook"] == f"docs/operations.md#{rule['alert'].lower()}"
        assert rule["alert"] in headings, f"docs/operations.md has no section for {rule['alert']}"
        assert re.fullmatch(r"\d+[smh]", rule.get("for", "0s")), rule["alert"]
    required = {
        "KroniiServiceDown", "KroniiDependencyNotReady", "KroniiSensorX11ErrorsRising",
        "KroniiSensorNoActivityEvents", "KroniiAuditStoreNotReady",
    }  # fmt: skip
    assert required <= set(names)


def test_alert_expressions_use_only_known_metrics_and_labels() -> None:
    problems = {r["alert"]: unknown_series_and_labels(r["expr"]) for r in alert_rules()}
    assert not {k: v for k, v in problems.items() if v}


def test_promtool_accepts_the_config_and_the_alert_unit_tests_pass() -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool is missing: `make sysdeps` installs it (Debian package `prometheus`)")
    for args in (
        ["check", "config", "prometheus.yml"],
        ["check", "rules", "alerts.yml"],
        ["test", "rules", "alerts_test.yml"],
    ):
        result = subprocess.run(
            [promtool, *args], cwd=PROMETHEUS, capture_output=True, text=True, timeout=120
        )
        assert result.returncode == 0, f"promtool {' '.join(args)}:\n{result.stdout}\n{result.stderr}"


def test_every_alert_has_a_promtool_unit_test() -> None:
    tests = load_yaml(PROMETHEUS / "alerts_test.yml")
    tested = {case["alertname"] for t in tests["tests"] for case in t.get("alert_rule_test", [])}
    untested = {r["alert"] for r in alert_rules()} - tested
    # latency and flapping need histogram fixtures; they stay covered by the expression checks.
    assert untested <= {"KroniiHTTPLatencyHigh", "KroniiSensorFocusLatencyHigh", "KroniiSensorStateFlapping"}


# ---- Grafana --------------------------------------------------------------------------------------------


def provisioned_datasource() -> dict[str, Any]:
    sources = load_yaml(GRAFANA / "provisioning" / "datasources" / "prometheus.yaml")["datasources"]
    assert len(sources) == 1
    source: dict[str, Any] = sources[0]
    return source


def test_grafana_provisioning_points_at_prometheus_and_the_mounted_dashboards(
    compose: dict[str, Any],
) -> None:
    source = provisioned_datasource()
    assert source["type"] == "prometheus" and source["url"] == "http://prometheus:9090"
    assert "127.0.0.1:9090:9090" in compose["services"]["prometheus"]["ports"]
    providers = load_yaml(GRAFANA / "provisioning" / "dashboards" / "kronii.yaml")["providers"]
    grafana = compose["services"]["grafana"]
    mounts = dict(v.rsplit(":", 1)[0].split(":", 1) for v in grafana["volumes"] if v.startswith("./"))
    assert mounts["./deploy/grafana/provisioning"] == "/etc/grafana/provisioning"
    assert providers[0]["options"]["path"] == mounts["./deploy/grafana/dashboards"]
    home = grafana["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
    assert home.startswith(providers[0]["options"]["path"] + "/")
    assert (GRAFANA / "dashboards" / Path(home).name).is_file()


def test_dashboards_are_valid_json_with_unique_ids_that_fit_the_grid() -> None:
    paths = dashboards()
    assert {p.name for p in paths} >= {
        "kronii-overview.json",
        "kronii-sensor.json",
        "kronii-supervisor.json",
        "kronii-capture.json",
        "kronii-scheduler.json",
        "kronii-pipeline.json",
        "kronii-broker.json",
        "kronii-critic.json",
        "kronii-vision.json",
    }
    uid = provisioned_datasource()["uid"]
    uids = []
    for path in paths:
        board = json.loads(path.read_text(encoding="utf-8"))
        uids.append(board["uid"])
        assert board["title"] and board["schemaVersion"] >= 36
        panels = list(dashboard_panels(board))
        ids = [p["id"] for p in panels]
        assert len(ids) == len(set(ids)), f"{path.name}: duplicate panel ids"
        variables = {v["name"]: v for v in board["templating"]["list"]}
        assert variables["datasource"]["current"]["value"] == uid
        for var in variables.values():
            if var["type"] == "query":
                assert var["datasource"]["uid"] in ("${datasource}", uid), f"{path.name}: ${var['name']}"
        for panel in panels:
            grid = panel["gridPos"]
            assert grid["x"] >= 0 and grid["x"] + grid["w"] <= 24 and grid["h"] > 0, panel["title"]
            if panel["type"] == "row":
                continue
            assert panel["targets"], f"{path.name}: {panel['title']} has no query"
            assert panel["datasource"]["uid"] in ("${datasource}", uid)
            refs = [t["refId"] for t in panel["targets"]]
            assert len(refs) == len(set(refs)), panel["title"]
            for target in panel["targets"]:
                assert target["datasource"]["uid"] in ("${datasource}", uid)
                assert target["expr"].strip(), panel["title"]
            for var in re.findall(r"\$(?!__)\{?(\w+)", json.dumps(panel["targets"])):
                assert var in variables, f"{path.name}: {panel['title']} uses undefined ${var}"
    assert len(uids) == len(set(uids))


@pytest.mark.parametrize("path", dashboards(), ids=lambda p: p.name)
def test_dashboard_expressions_use_only_known_metrics_and_labels(path: Path) -> None:
    board = json.loads(path.read_text(encoding="utf-8"))
    problems = {where: unknown_series_and_labels(expr) for where, expr in dashboard_exprs(board)}
    assert problems, "the dashboard has queries"
    assert not {k: v for k, v in problems.items() if v}


def test_dashboard_expressions_parse_as_promql() -> None:
    import promql_parser  # a dev dependency: make test installs it

    for path in dashboards():
        for where, expr in dashboard_exprs(json.loads(path.read_text(encoding="utf-8"))):
            try:
                promql_parser.parse(_promql_for_parsing(expr))
            except Exception as error:  # the parser raises ValueError with the position
                pytest.fail(f"{where}: {error}")
    for rule in alert_rules():
        promql_parser.parse(rule["expr"])


def test_dashboards_chart_every_kronii_metric() -> None:
    used = set()
    for path in dashboards():
        for _, expr in dashboard_exprs(json.loads(path.read_text(encoding="utf-8"))):
            used |= {s.name for s in promql_selectors(expr)[0]}
    for metric in set({**COMMON_METRICS, **SERVICE_METRICS}) - NOT_CHARTED:
        names = {f"{metric}_bucket", f"{metric}_sum", f"{metric}_count"} if metric in HISTOGRAMS else {metric}
        assert used & names, f"no dashboard panel shows {metric}"


def test_common_metric_names_match_what_the_shared_library_exports() -> None:
    from kronii.foundation.telemetry import CommonMetrics
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    CommonMetrics("test", registry)
    exported: dict[str, set[str]] = {}
    for family in registry.collect():
        if family.type == "counter":
            exported[f"{family.name}_total"] = set()
        else:
            exported[family.name] = set()
    for name in COMMON_METRICS:
        assert name in exported, f"kronii.foundation.telemetry no longer exports {name}"
    metrics = CommonMetrics("test", CollectorRegistry())
    for attr, name in (
        ("http_requests", "kronii_http_requests_total"),
        ("http_duration", "kronii_http_request_duration_seconds"),
        ("bus_published", "kronii_bus_published_total"),
        ("bus_received", "kronii_bus_received_total"),
        ("dependency_ready", "kronii_dependency_ready"),
        ("audit_rows", "kronii_audit_rows_total"),
        ("build_info", "kronii_build_info"),
    ):
        assert set(getattr(metrics, attr)._labelnames) == COMMON_METRICS[name], name


# ---- OpenTelemetry collector ---------------------------------------------------------------------------


def _deep_merge(base: Any, layer: Any) -> Any:
    if isinstance(base, dict) and isinstance(layer, dict):
        return {k: _deep_merge(base[k], v) if k in base else v for k, v in layer.items()} | {
            k: v for k, v in base.items() if k not in layer
        }
    return layer


@pytest.mark.parametrize(
    "layers", [["config.yaml"], ["config.yaml", "tracing.yaml"]], ids=["base", "tracing"]
)
def test_otel_collector_pipelines_use_only_defined_components(layers: list[str]) -> None:
    config: dict[str, Any] = {}
    for layer in layers:
        config = _deep_merge(config, load_yaml(OTEL / layer))
    service = config["service"]
    for ext in service.get("extensions", []):
        assert ext in config["extensions"], ext
    assert service["pipelines"], "at least one pipeline"
    for name, pipeline in service["pipelines"].items():
        for kind in ("receivers", "processors", "exporters"):
            for component in pipeline.get(kind, []):
                assert component in config.get(kind, {}), f"pipeline {name}: {kind} {component} undefined"
        assert pipeline["processors"][0] == "memory_limiter", "memory_limiter goes first"
        assert pipeline["processors"][-1] == "batch", "batch goes last"
    for kind in ("receivers", "processors", "exporters"):
        used = {c for p in service["pipelines"].values() for c in p.get(kind, [])}
        assert set(config.get(kind, {})) <= used, f"{kind} defined but unused: {set(config[kind]) - used}"


def test_services_send_traces_to_the_collectors_otlp_port(compose_all_layers: dict[str, Any]) -> None:
    otel = load_yaml(OTEL / "config.yaml")
    grpc_port = int(otel["receivers"]["otlp"]["protocols"]["grpc"]["endpoint"].rsplit(":", 1)[1])
    collector = compose_all_layers["services"]["otel-collector"]
    assert f"127.0.0.1:{grpc_port}:{grpc_port}" in collector["ports"]
    for name, svc in kronii_services(compose_all_layers).items():
        endpoint = _environment(svc)["OTEL_EXPORTER_OTLP_ENDPOINT"]
        host = "127.0.0.1" if svc.get("network_mode") == "host" else "otel-collector"
        assert endpoint == f"http://{host}:{grpc_port}", name
    tracing = [c for c in collector["command"] if c.startswith("--config=")]
    assert tracing[-1].endswith("/tracing.yaml"), "the tracing layer adds its collector config"


# ---- Helm chart -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def values() -> dict[str, Any]:
    data: dict[str, Any] = load_yaml(CHART / "values.yaml")
    return data


@pytest.fixture(scope="module")
def values_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((CHART / "values.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    return schema


def _with(values: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    copy: dict[str, Any] = json.loads(json.dumps(values))
    *path, last = dotted.split(".")
    node = copy
    for key in path:
        node = node.setdefault(key, {})
    node[last] = value
    return copy


def test_chart_metadata_is_a_helm_v2_application_chart() -> None:
    chart = load_yaml(CHART / "Chart.yaml")
    assert chart["apiVersion"] == "v2" and chart["name"] == "kronii" and chart["type"] == "application"
    assert re.fullmatch(r"\d+\.\d+\.\d+(-[\w.]+)?", chart["version"])
    assert chart["appVersion"]
    kube = re.match(r">=\s*1\.(\d+)", chart["kubeVersion"])
    assert kube and int(kube.group(1)) >= 27, "gRPC probes need Kubernetes 1.27"


def test_helm_values_validate_against_the_values_schema(
    values: dict[str, Any], values_schema: dict[str, Any]
) -> None:
    jsonschema.Draft7Validator(values_schema).validate(values)
    for tier in HELM_TIERS:
        # A tier is deployed by default only once its service exists as code: an image without the
        # module would crash-loop.
        exists = (ROOT / "services" / tier).is_dir()
        assert values[tier]["create"] is exists, (
            f"{tier}.create must be {exists} while services/{tier} exists={exists}"
        )
        assert (values[tier]["httpPort"], values[tier]["grpcPort"]) == (
            MESH[tier].http_port,
            MESH[tier].grpc_port,
        )
    assert values["llm"]["create"] is False, "the LLM tier is opt-in"


@pytest.mark.parametrize(
    ("dotted", "value"),
    [
        ("securityContext.readOnlyRootFilesystem", False),
        ("securityContext.allowPrivilegeEscalation", True),
        ("securityContext.capabilities", {"drop": ["NET_RAW"]}),
        ("podSecurityContext.runAsNonRoot", False),
        ("connections.existingSecret", ""),
        ("pipeline.replicas", "two"),
        ("pipeline.grpcPort", 80),
        ("pipline", {"create": True}),
        ("llm.create", True),  # without a model claim
        ("llm.model.file", "/etc/passwd"),
        ("image.tag", "latest"),
        ("image.digest", "sha256:1234"),
        ("image.digest", "latest"),
        ("llm.image.tag", "latest"),
        ("llm.image.tag", "server"),
        ("llm.image.digest", "md5:" + "0" * 32),
    ],
)
def test_helm_values_schema_rejects_unsafe_or_mistyped_values(
    values: dict[str, Any], values_schema: dict[str, Any], dotted: str, value: Any
) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(_with(values, dotted, value), values_schema, cls=jsonschema.Draft7Validator)


@pytest.mark.parametrize("tier", [*HELM_TIERS, "llm", "migrate"])
def test_each_tier_has_its_own_template_gated_by_its_create_flag(tier: str, values: dict[str, Any]) -> None:
    text = (CHART / "templates" / f"{tier}.yaml").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("{{- /*")]
    assert lines[0].strip() == f"{{{{- if .Values.{tier}.create }}}}", f"{tier}.yaml must open with its gate"
    assert lines[-1].strip() == "{{- end }}"
    assert "create" in values[tier]


def test_templates_take_security_contexts_probes_and_secrets_from_one_place() -> None:
    """Without Helm at hand, the template text itself: the shared helper must carry the hardening,
    the probes and the Secret references that the rendered checks below verify on real output."""
    helpers = (CHART / "templates" / "_helpers.tpl").read_text(encoding="utf-8")
    for needle in (
        "toYaml $root.Values.podSecurityContext",
        "toYaml $root.Values.securityContext",
        "kind: ServiceAccount",
        "key: {{ $c.natsUrlKey }}",
        "key: {{ $c.redisUrlKey }}",
        "key: {{ $c.databaseUrlKey }}",
    ):
        assert needle in helpers, needle
    for probe in ("startupProbe", "livenessProbe"):
        assert re.search(probe + r":\s*\n\s*grpc:\s*\n\s*port: \{\{ \$svc\.grpcPort \}\}", helpers), probe
    assert re.search(r"readinessProbe:\s*\n\s*httpGet:\s*\n\s*path: /readyz\s*\n\s*port: http", helpers)
    assert helpers.count("automountServiceAccountToken: false") >= 2, "on the ServiceAccount and on the pod"
    assert helpers.count("secretKeyRef:") == 4  # NATS, Redis, PostgreSQL URLs and the mesh token
    known = known_kronii_variables()
    for name in re.findall(r"- name: (KRONII_(?:\{\{ \$upper \}\}|[A-Z_])+)", helpers):
        for tier in HELM_TIERS:
            variable = name.replace("{{ $upper }}", tier.upper())
            assert variable in known, f"the chart sets {variable}, which no setting reads"
    for name in ("_helpers.tpl", "llm.yaml", "migrate.yaml"):
        text = (CHART / "templates" / name).read_text(encoding="utf-8")
        assert re.search(r"- name: tmp\s*\n\s*mountPath: /tmp", text), f"{name}: a writable /tmp"
        if name != "_helpers.tpl":
            assert "toYaml .Values.podSecurityContext" in text and "toYaml .Values.securityContext" in text, (
                name
            )
            assert "automountServiceAccountToken: false" in text, name
    for tier in HELM_TIERS:
        text = (CHART / "templates" / f"{tier}.yaml").read_text(encoding="utf-8")
        assert (
            f'include "kronii.meshService" (dict "root" $ "component" "{tier}" "svc" .Values.{tier})' in text
        )


# -- rendered through Helm's Go SDK (helm-python-sdk) --


@pytest.fixture(scope="module")
def helm() -> Any:
    import helm_python  # a dev dependency: make test installs it

    return helm_python


TIERS_ON: dict[str, Any] = {tier: {"create": True} for tier in HELM_TIERS}
ALL_ON = {
    **TIERS_ON,
    "llm": {"create": True, "model": {"existingClaim": "kronii-models"}},
    "metrics": {"serviceMonitor": {"create": True}},
}


def render(helm: Any, overrides: dict[str, Any]) -> list[dict[str, Any]]:
    with helm.Chart.load(str(CHART)) as chart:
        manifests = chart.render(overrides, name="kronii", namespace="kronii")
    docs = []
    for name, text in manifests.items():
        if name.endswith((".yaml", ".yml")):
            docs += [d for d in yaml.safe_load_all(text) if d]
    return docs


@pytest.fixture(scope="module")
def rendered(helm: Any) -> list[dict[str, Any]]:
    return render(helm, ALL_ON)


def _workloads(docs: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for doc in docs:
        if doc["kind"] in ("Deployment", "Job"):
            yield doc


def _component(doc: dict[str, Any]) -> str:
    return str(doc["metadata"]["labels"]["app.kubernetes.io/component"])


def test_helm_lint_finds_no_errors_or_warnings(helm: Any) -> None:
    for overrides in ({}, ALL_ON):
        report = helm.lint(str(CHART), overrides, strict=True, kube_version="v1.30.0")
        serious = [m for m in report["messages"] if m["severity"] >= 2]
        assert not report["errors"] and not serious, report


def test_helm_template_renders_hardened_workloads(rendered: list[dict[str, Any]]) -> None:
    workloads = list(_workloads(rendered))
    assert {_component(w) for w in workloads} == {*HELM_TIERS, "llm", "migrate"}
    accounts = {d["metadata"]["name"] for d in rendered if d["kind"] == "ServiceAccount"}
    for workload in workloads:
        pod = workload["spec"]["template"]["spec"]
        where = workload["metadata"]["name"]
        assert pod["securityContext"]["runAsNonRoot"] is True, where
        assert pod["securityContext"]["runAsUser"] == 10001, where
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}, where
        assert pod["automountServiceAccountToken"] is False, where
        assert pod["serviceAccountName"] in accounts, where
        mounts = set()
        for container in pod["containers"]:
            sc = container["securityContext"]
            assert sc["readOnlyRootFilesystem"] is True, where
            assert sc["allowPrivilegeEscalation"] is False, where
            assert sc["capabilities"] == {"drop": ["ALL"]}, where
            assert sc.get("privileged", False) is False, where
            assert container["resources"]["requests"] and container["resources"]["limits"], where
            mounts |= {m["mountPath"] for m in container.get("volumeMounts", [])}
        assert "/tmp" in mounts, f"{where}: a writable /tmp under a read-only root"


def test_helm_kronii_tiers_probe_grpc_health_and_http_readyz(rendered: list[dict[str, Any]]) -> None:
    for workload in _workloads(rendered):
        tier = _component(workload)
        if tier not in HELM_TIERS:
            continue
        (container,) = workload["spec"]["template"]["spec"]["containers"]
        assert container["command"] == ["/app/.venv/bin/python", "-m", f"kronii.{tier}"]
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        assert ports == {"http": MESH[tier].http_port, "grpc": MESH[tier].grpc_port}
        assert container["livenessProbe"]["grpc"] == {"port": MESH[tier].grpc_port}
        assert container["startupProbe"]["grpc"] == {"port": MESH[tier].grpc_port}
        assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}


def test_helm_tiers_read_connection_urls_from_the_existing_secret(
    rendered: list[dict[str, Any]], values: dict[str, Any]
) -> None:
    known = known_kronii_variables()
    secret = values["connections"]["existingSecret"]
    assert not [d for d in rendered if d["kind"] == "Secret"], "the chart creates no Secret"
    for workload in _workloads(rendered):
        tier = _component(workload)
        if tier == "llm":
            continue
        env = {e["name"]: e for e in workload["spec"]["template"]["spec"]["containers"][0]["env"]}
        for variable, key in (
            ("KRONII_NATS_URL", values["connections"]["natsUrlKey"]),
            ("KRONII_REDIS_URL", values["connections"]["redisUrlKey"]),
            ("KRONII_DATABASE_URL", values["connections"]["databaseUrlKey"]),
        ):
            assert env[variable]["valueFrom"]["secretKeyRef"] == {"name": secret, "key": key}, (
                f"{tier} {variable}"
            )
        for name, item in env.items():
            if name.startswith("KRONII_"):
                assert name in known, f"{tier}: {name} is not a kronii setting"
            assert "://" not in str(item.get("value", "")) or name == "OTEL_EXPORTER_OTLP_ENDPOINT", name
        if tier in HELM_TIERS:
            assert env[f"KRONII_{tier.upper()}_HOST"]["value"] == ANY_ADDRESS


def test_helm_create_flags_gate_each_tier(helm: Any) -> None:
    defaults = {_component(w) for w in _workloads(render(helm, {}))}
    existing = {tier for tier in HELM_TIERS if (ROOT / "services" / tier).is_dir()}
    assert defaults == {*existing, "migrate"}, "only tiers with code and the migration are on by default"
    assert {_component(w) for w in _workloads(render(helm, TIERS_ON))} == {*HELM_TIERS, "migrate"}
    for tier in [*HELM_TIERS, "migrate"]:
        docs = render(helm, {**TIERS_ON, tier: {"create": False}})
        left = [d["kind"] for d in docs if d["metadata"]["labels"]["app.kubernetes.io/component"] == tier]
        assert not left, f"{tier}.create=false still renders {left}"


def test_helm_refuses_values_that_break_the_schema_or_reuse_a_port(helm: Any) -> None:
    for overrides in (
        {"securityContext": {"readOnlyRootFilesystem": False}},
        {"llm": {"create": True}},
        {"pipeline": {"create": True, "httpPort": 7103}},
        # A host agent needs the person's display: the chart has no tier for it.
        {"broker": {"create": True}},
        {"vision": {"create": True}},
    ):
        with pytest.raises(helm.HelmError):
            render(helm, overrides)


def test_compose_llm_layer_runs_the_llama_cpp_build_the_chart_runs(
    compose_all_layers: dict[str, Any], values: dict[str, Any]
) -> None:
    llm = values["llm"]["image"]
    assert compose_all_layers["services"]["llm"]["image"] == f"{llm['repository']}:{llm['tag']}"


def test_helm_values_pin_every_image(values: dict[str, Any]) -> None:
    chart = load_yaml(CHART / "Chart.yaml")
    kronii_tag = values["image"]["tag"] or chart["appVersion"]
    assert re.fullmatch(r"\d+\.\d+\.\d+(-[\w.]+)?", kronii_tag), f"kronii image tag {kronii_tag!r}"
    llm_tag = values["llm"]["image"]["tag"]
    assert re.fullmatch(r"server-b\d+", llm_tag), f"llama.cpp image tag {llm_tag!r}: a release build"
    for image in (values["image"], values["llm"]["image"]):
        assert "digest" in image, "a digest can pin the image"
        assert re.fullmatch(r"(sha256:[0-9a-f]{64})?", image["digest"])


def _images(docs: list[dict[str, Any]]) -> dict[str, list[str]]:
    return {
        workload["metadata"]["name"]: [
            c["image"]
            for key in ("initContainers", "containers")
            for c in workload["spec"]["template"]["spec"].get(key) or []
        ]
        for workload in _workloads(docs)
    }


def test_helm_renders_pinned_images_and_digests(helm: Any, rendered: list[dict[str, Any]]) -> None:
    for where, images in _images(rendered).items():
        for image in images:
            assert floating_image_problem(image) is None, f"{where}: {image}: {floating_image_problem(image)}"
    kronii_digest, llm_digest = "sha256:" + "a" * 64, "sha256:" + "b" * 64
    overrides = {
        **ALL_ON,
        "image": {"digest": kronii_digest},
        "llm": {**ALL_ON["llm"], "image": {"digest": llm_digest}},
    }
    for where, images in _images(render(helm, overrides)).items():
        for image in images:
            digest = llm_digest if where.endswith("-llm") else kronii_digest
            assert re.fullmatch(r"[\w./-]+:[\w.-]+@" + digest, image), f"{where}: {image}"


def test_helm_llm_tier_serves_the_model_from_the_claim_read_only(rendered: list[dict[str, Any]]) -> None:
    (llm,) = [w for w in _workloads(rendered) if _component(w) == "llm"]
    pod = llm["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert "/models/model.gguf" in container["args"]
    claim = next(v for v in pod["volumes"] if v["name"] == "models")["persistentVolumeClaim"]
    assert claim == {"claimName": "kronii-models", "readOnly": True}
    assert container["readinessProbe"]["httpGet"]["path"] == "/health"


def test_supervisor_metric_names_match_what_the_supervisor_exports() -> None:
    from kronii.supervisor.metrics import SupervisorMetrics
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    SupervisorMetrics(registry)
    exported: dict[str, set[str]] = {}
    for family in registry.collect():
        name = f"{family.name}_total" if family.type == "counter" else family.name
        labels = {key for sample in family.samples for key in sample.labels if key != "le"}
        exported[name] = labels
    assert set(exported) <= set(SUPERVISOR_METRICS), set(exported) - set(SUPERVISOR_METRICS)
    for name in (
        "trigger_requests_total",
        "trigger_timeout_total",
        "trigger_fallback_resume_total",
        "trigger_latency_ms",
    ):
        assert name in exported, f"seed 002 names {name}"
    doc = OPERATIONS_DOC.read_text(encoding="utf-8")
    for name in SUPERVISOR_METRICS:
        assert documented(name, doc), f"docs/operations.md does not list {name}"


def _exported(registry: Any) -> dict[str, set[str]]:
    """Series name (counters with their _total) -> label names, as a scrape would show them."""
    exported: dict[str, set[str]] = {}
    for family in registry.collect():
        name = f"{family.name}_total" if family.type == "counter" else family.name
        exported[name] = {key for sample in family.samples for key in sample.labels if key != "le"}
    return exported


def _declared_labels(registry: Any) -> dict[str, set[str]]:
    """Label names each collector declares (labelled families have no sample until first use)."""
    declared: dict[str, set[str]] = {}
    # prometheus_client has no public listing of a registry's collectors.
    for collector in list(registry._collector_to_names):
        for family in collector.describe():
            name = f"{family.name}_total" if family.type == "counter" else family.name
            declared[name] = set(getattr(collector, "_labelnames", ()))
    return declared


def test_capture_metric_names_match_what_the_capture_service_exports() -> None:
    from types import SimpleNamespace

    from kronii.capture.metrics import CaptureMetrics
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    CaptureMetrics(SimpleNamespace(registry=registry))  # type: ignore[arg-type]
    assert _declared_labels(registry) == CAPTURE_METRICS
    assert set(_exported(registry)) == set(CAPTURE_METRICS)
    doc = OPERATIONS_DOC.read_text(encoding="utf-8")
    for name in CAPTURE_METRICS:
        assert documented(name, doc), f"docs/operations.md does not list {name}"


def test_scheduler_metric_names_match_what_the_scheduler_exports() -> None:
    from kronii.scheduler.metrics import SchedulerMetrics
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    SchedulerMetrics(registry)
    assert _declared_labels(registry) == SCHEDULER_METRICS
    assert set(_exported(registry)) == set(SCHEDULER_METRICS)
    doc = OPERATIONS_DOC.read_text(encoding="utf-8")
    for name in SCHEDULER_METRICS:
        assert documented(name, doc), f"docs/operations.md does not list {name}"


def test_pipeline_metric_names_match_what_the_pipeline_exports() -> None:
    from kronii.pipeline.metrics import PipelineMetrics
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    PipelineMetrics(registry)
    assert _declared_labels(registry) == PIPELINE_METRICS
    assert set(_exported(registry)) == set(PIPELINE_METRICS)
    assert {"kronii_pipeline_run_seconds"} == {m for m in PIPELINE_METRICS if m in HISTOGRAMS}
    doc = OPERATIONS_DOC.read_text(encoding="utf-8")
    for name in PIPELINE_METRICS:
        assert documented(name, doc), f"docs/operations.md does not list {name}"


def test_pipeline_alerts_cover_stuck_runs_model_failures_deferrals_and_notifications() -> None:
    """The pipeline's own alerts: each reads a pipeline metric, and the four failure modes the
    operations runbook describes each have one."""
    pipeline_alerts = {
        r["alert"]: r["expr"] for r in alert_rules() if r["alert"].startswith("KroniiPipeline")
    }
    assert set(pipeline_alerts) >= {
        "KroniiPipelineRunsStopped",
        "KroniiPipelineModelCallsFailing",
        "KroniiPipelineDeferringMostRuns",
        "KroniiPipelineNotificationsNotDelivered",
    }
    for alert, expr in pipeline_alerts.items():
        assert any(s.name.startswith("kronii_pipeline_") for s in promql_selectors(expr)[0]), alert


def test_broker_metric_names_match_what_the_broker_exports() -> None:
    from kronii.broker.metrics import BrokerMetrics
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    BrokerMetrics(registry)
    assert _declared_labels(registry) == BROKER_METRICS
    assert set(_exported(registry)) == set(BROKER_METRICS)
    assert {m for m in BROKER_METRICS if m in HISTOGRAMS} == {
        "kronii_broker_revocation_seconds",
        "kronii_broker_revocation_at_screen_seconds",
        "kronii_broker_injection_seconds",
    }
    doc = OPERATIONS_DOC.read_text(encoding="utf-8")
    for name in BROKER_METRICS:
        assert documented(name, doc), f"docs/operations.md does not list {name}"


def test_broker_alerts_cover_slow_revocation_dropped_input_and_readiness() -> None:
    """The broker's own alerts: the seed's revocation goal, agents' input dropped for reasons that
    mean something is wrong (not a person taking the desktop back), and the broker unable to act."""
    broker_alerts = {r["alert"]: r["expr"] for r in alert_rules() if r["alert"].startswith("KroniiBroker")}
    assert set(broker_alerts) >= {
        "KroniiBrokerRevocationSlow",
        "KroniiBrokerAgentInputDropped",
        "KroniiBrokerNotReady",
    }
    assert "kronii_broker_revocation_seconds_bucket" in broker_alerts["KroniiBrokerRevocationSlow"]
    dropped = broker_alerts["KroniiBrokerAgentInputDropped"]
    assert "stale_epoch" in dropped and "queue_full" in dropped and "user_control" not in dropped


def test_critic_metric_names_match_what_the_critic_exports() -> None:
    from kronii.critic.metrics import CriticMetrics
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    CriticMetrics(registry)
    assert _declared_labels(registry) == CRITIC_METRICS
    assert set(_exported(registry)) == set(CRITIC_METRICS)
    assert {m for m in CRITIC_METRICS if m in HISTOGRAMS} == {
        "kronii_critic_event_to_hint_seconds",
        "kronii_critic_embedding_seconds",
        "kronii_critic_knn_seconds",
    }
    doc = OPERATIONS_DOC.read_text(encoding="utf-8")
    for name in CRITIC_METRICS:
        assert documented(name, doc), f"docs/operations.md does not list {name}"


def test_critic_labelled_series_start_at_zero_for_every_value_the_critic_uses() -> None:
    """A fresh critic shows 0 for every shell, redaction place, trigger and tier, so the dashboard's
    by-label panels read 0 rather than "No data" before the first command."""
    from kronii.critic.core.model import Trigger
    from kronii.critic.metrics import REDACTED_IN, SHELLS, TIERS, CriticMetrics
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    CriticMetrics(registry)
    expected = {
        "kronii_critic_events_total": {("shell", shell) for shell in SHELLS},
        "kronii_critic_redactions_total": {("where", where) for where in REDACTED_IN},
        "kronii_critic_critiques_total": {("trigger", kind.value) for kind in Trigger},
        "kronii_critic_rule_failures_total": {("trigger", kind.value) for kind in Trigger},
        "kronii_critic_knn_seconds_count": {("tier", tier) for tier in TIERS},
    }
    assert set(SHELLS) >= {"bash", "zsh", "fish", "run", "pane"} and set(TIERS) == {"ram", "disk"}
    found: dict[str, dict[tuple[str, str], float]] = {}
    for family in registry.collect():
        for sample in family.samples:
            if sample.name in expected:
                (label,) = sample.labels.items()
                found.setdefault(sample.name, {})[label] = sample.value
    for name, labels in expected.items():
        assert set(found.get(name, {})) == labels, name
        assert all(value == 0 for value in found[name].values()), name


def test_critic_alerts_cover_slow_hints_dropped_embeddings_the_model_and_malformed_lines() -> None:
    critic_alerts = {r["alert"]: r["expr"] for r in alert_rules() if r["alert"].startswith("KroniiCritic")}
    assert set(critic_alerts) >= {
        "KroniiCriticHintSlow",
        "KroniiCriticEmbeddingsDropped",
        "KroniiCriticModelUnavailable",
        "KroniiCriticSpoolMalformed",
    }
    hint = critic_alerts["KroniiCriticHintSlow"]
    assert "kronii_critic_event_to_hint_seconds_bucket" in hint and "> 0.02" in hint, "the hooks wait 20 ms"
    assert "kronii_critic_embeddings_dropped_total" in critic_alerts["KroniiCriticEmbeddingsDropped"]
    assert critic_alerts["KroniiCriticModelUnavailable"].strip() == "kronii_critic_model_available == 0"
    assert "kronii_critic_spool_malformed_total" in critic_alerts["KroniiCriticSpoolMalformed"]


def test_vision_metric_names_match_what_the_vision_engine_exports() -> None:
    from kronii.vision.metrics import VisionMetrics
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    VisionMetrics(registry)
    assert _declared_labels(registry) == VISION_METRICS
    assert set(_exported(registry)) == set(VISION_METRICS)
    assert {m for m in VISION_METRICS if m in HISTOGRAMS} == {"kronii_vision_context_seconds"}


def test_console_metric_names_match_what_the_console_exports() -> None:
    from kronii.console.metrics import ConsoleMetrics
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    ConsoleMetrics(registry)
    assert _declared_labels(registry) == CONSOLE_METRICS
    assert set(_exported(registry)) == set(CONSOLE_METRICS)


def test_console_metrics_are_listed_in_the_operations_doc() -> None:
    doc = OPERATIONS_DOC.read_text(encoding="utf-8")
    undocumented = [name for name in CONSOLE_METRICS if not documented(name, doc)]
    assert not undocumented, f"docs/operations.md does not list {undocumented}"


def test_vision_metrics_are_listed_in_the_operations_doc() -> None:
    doc = OPERATIONS_DOC.read_text(encoding="utf-8")
    undocumented = [name for name in VISION_METRICS if not documented(name, doc)]
    assert not undocumented, f"docs/operations.md does not list {undocumented}"


def test_vision_labelled_series_start_at_zero_for_every_value_the_engine_uses() -> None:
    """A fresh engine shows 0 for every plan state, action type and outcome, safety row, tick decision
    and context part, so the dashboard's by-label panels read 0 rather than "No data"."""
    from kronii.vision.core.actions import ActionType
    from kronii.vision.core.effects import Effect
    from kronii.vision.core.plans import PlanState
    from kronii.vision.core.safety import ROWS
    from kronii.vision.metrics import PARTS, TICKS, VisionMetrics
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    VisionMetrics(registry)
    states = {(("state", state.value),) for state in PlanState}
    expected = {
        "kronii_vision_plans_total": states,
        "kronii_vision_plan_ends_total": states,
        "kronii_vision_actions_total": {
            (("type", kind.value), ("outcome", outcome))
            for kind in ActionType
            for outcome in ("done", "failed")
        },
        "kronii_vision_safety_rows_total": {(("row", row.id),) for row in ROWS},
        "kronii_vision_ticks_total": {(("decision", decision),) for decision in TICKS},
        "kronii_vision_context_seconds_count": {(("part", part),) for part in PARTS},
        "kronii_vision_effects_total": {
            (("effect", e.value), ("seen", seen)) for e in Effect for seen in ("yes", "no")
        },
    }
    assert set(TICKS) == {"skipped", "changed"} and "total" in PARTS
    found: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in registry.collect():
        for sample in family.samples:
            if sample.name in expected:
                found.setdefault(sample.name, {})[tuple(sample.labels.items())] = sample.value
    for name, labels in expected.items():
        assert set(found.get(name, {})) == labels, name
        assert all(value == 0 for value in found[name].values()), name


def test_vision_alerts_cover_failing_plans_a_slow_screen_and_readiness() -> None:
    vision_alerts = {r["alert"]: r["expr"] for r in alert_rules() if r["alert"].startswith("KroniiVision")}
    assert set(vision_alerts) >= {
        "KroniiVisionPlansFailing",
        "KroniiVisionContextSlow",
        "KroniiVisionNotReady",
    }
    failing = vision_alerts["KroniiVisionPlansFailing"]
    assert 'kronii_vision_plan_ends_total{state="failed"}' in failing
    slow = vision_alerts["KroniiVisionContextSlow"]
    assert 'kronii_vision_context_seconds_bucket{part="total"}' in slow and "> 3" in slow
    ready = vision_alerts["KroniiVisionNotReady"]
    assert 'service="vision"' in ready and "accessibility" in ready and "display" in ready
    assert "vision" in scrape_targets(), "KroniiServiceDown covers the engine through its scrape target"


def _bind_mounts(svc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """target -> the long-syntax bind mount (short-syntax entries are left out)."""
    return {v["target"]: v for v in svc.get("volumes", []) if isinstance(v, dict) and v.get("type") == "bind"}


def test_compose_critic_sees_the_shells_directory_their_pids_and_keeps_its_journal(
    compose: dict[str, Any],
) -> None:
    """The containerised critic computes the same directory the shells' hooks write to (mounted from
    the user's runtime dir, never created by Docker as root), shares the host's pids (the hooks check
    critic.pid in /proc, the critic checks each shell's pid before writing its hint) and keeps its day
    files on the host."""
    from kronii.critic.adapters.shell_init import critic_runtime_dir

    critic = compose["services"]["critic"]
    env = _environment(critic)
    assert critic["pid"] == "host"
    assert critic["user"] == "1000:1000", "the desktop user: the spool is 0600 in a 0700 directory"
    mounts = _bind_mounts(critic)
    inside = critic_runtime_dir(environ=env, data_dir=Path(env["KRONII_DATA_DIR"]))
    assert str(inside) in mounts, f"the critic would read {inside}, which is not mounted"
    assert mounts[str(inside)]["source"] == "/run/user/1000/kronii/critic"
    journal = f"{env['KRONII_DATA_DIR']}/critic"
    assert journal in mounts and not mounts[journal].get("read_only"), "the day files outlive the container"
    for target, mount in mounts.items():
        assert mount["bind"]["create_host_path"] is False, f"{target}: Docker would create it owned by root"


def test_compose_vision_reaches_the_accessibility_bus_and_the_broker_and_keeps_its_key(
    compose: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The containerised engine finds the accessibility bus at the address the session bus gives (a
    socket under the host's runtime dir, mounted at the same path and never created by Docker), calls
    the broker where the containerised broker listens, and keeps the Ed25519 key the broker knows it by
    on the host."""
    from kronii.vision.settings import VisionSettings

    vision, broker = compose["services"]["vision"], compose["services"]["broker"]
    assert vision["user"] == "1000:1000", "the desktop user: its buses accept no one else"
    mounts = _bind_mounts(vision)
    a11y = mounts["/run/user/1000/at-spi"]
    assert a11y["source"] == "/run/user/1000/at-spi"
    for name in list(os.environ):
        if name.startswith("KRONII_"):
            monkeypatch.delenv(name)
    for name, value in _environment(vision).items():
        if name.startswith("KRONII_"):
            monkeypatch.setenv(name, value)
    settings = VisionSettings()
    key_dir = str(settings.key_file().parent)
    assert key_dir in mounts and not mounts[key_dir].get("read_only"), "the key outlives the container"
    assert mounts[key_dir]["source"].endswith("/.local/share/kronii/vision"), "where `kronii up` keeps it"
    for target, mount in mounts.items():
        assert mount["bind"]["create_host_path"] is False, f"{target}: Docker would create it owned by root"
    broker_env = _environment(broker)
    assert (
        settings.broker_url
        == f"http://{broker_env['KRONII_BROKER_HOST']}:{broker_env['KRONII_BROKER_HTTP_PORT']}"
    )
    assert settings.use_capture is False, "capture's Unix socket is inside capture's own container"


def test_compose_postgres_has_the_vector_extension_the_critic_migration_creates(
    compose: dict[str, Any],
) -> None:
    migration = ROOT / "libs" / "stores" / "src" / "kronii" / "stores" / "migrations" / "versions"
    assert "CREATE EXTENSION IF NOT EXISTS vector" in (migration / "0008_critic.py").read_text(
        encoding="utf-8"
    )
    image = compose["services"]["postgres"]["image"]
    assert re.fullmatch(r"pgvector/pgvector:\d+\.\d+\.\d+-pg16", image), (
        f"{image}: PostgreSQL 16 with pgvector"
    )


SERVICE_DASHBOARDS = {
    "console": CONSOLE_METRICS,
    "broker": BROKER_METRICS,
    "critic": CRITIC_METRICS,
    "vision": VISION_METRICS,
    "capture": CAPTURE_METRICS,
    "scheduler": SCHEDULER_METRICS,
    "pipeline": PIPELINE_METRICS,
}


@pytest.mark.parametrize("service", sorted(SERVICE_DASHBOARDS))
def test_service_dashboard_charts_each_of_its_metrics(service: str) -> None:
    board = json.loads((GRAFANA / "dashboards" / f"kronii-{service}.json").read_text(encoding="utf-8"))
    used = set()
    for _, expr in dashboard_exprs(board):
        used |= {s.name for s in promql_selectors(expr)[0]}
    metrics = SERVICE_DASHBOARDS[service]
    for metric in metrics:
        names = {f"{metric}_bucket", f"{metric}_sum", f"{metric}_count"} if metric in HISTOGRAMS else {metric}
        assert used & names, f"kronii-{service}.json shows no {metric}"
    assert f'up{{job="kronii", component="{service}"}}' in json.dumps(board).replace('\\"', '"')


def test_compose_service_settings_are_that_services_settings(compose_all_layers: dict[str, Any]) -> None:
    """Each kronii container's own variables (KRONII_CAPTURE_*, KRONII_PIPELINE_*, ...) are read by
    its settings model (a misspelt one would be silently ignored: the settings models ignore unknown
    names)."""
    models = service_settings_models()
    for name, svc in kronii_services(compose_all_layers).items():
        service = _environment(svc)["KRONII_SERVICE"]
        if service not in models:
            continue
        reads = _settings_variables(models[service])
        prefix = f"KRONII_{service.upper()}_"
        for variable in _environment(svc):
            if variable.startswith(prefix):
                assert variable in reads, f"{name}: {variable} is not a {service} setting"


def test_compose_pipeline_settings_are_pipeline_settings(
    compose_all_layers: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pipeline container sets only variables PipelineSettings reads, and they load as valid
    settings with the mesh's ports (a misspelt or out-of-range value would fail here, not at start)."""
    from kronii.pipeline.settings import PipelineSettings

    (pipeline,) = [
        svc
        for svc in kronii_services(compose_all_layers).values()
        if _environment(svc)["KRONII_SERVICE"] == "pipeline"
    ]
    env = {k: v for k, v in _environment(pipeline).items() if k.startswith("KRONII_PIPELINE_")}
    reads = _settings_variables(PipelineSettings)
    assert env, "the pipeline container sets its own host and ports"
    assert set(env) <= reads, set(env) - reads
    for name in list(os.environ):
        if name.startswith("KRONII_PIPELINE_"):
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = PipelineSettings()
    assert settings.http_port == MESH["pipeline"].http_port
    assert settings.grpc_port == MESH["pipeline"].grpc_port
