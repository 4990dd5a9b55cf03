"""The real Prometheus scraping the real `kronii up`: every dashboard query answers with data (a zero
counts) and every alert rule names only series the services export.

An empty answer here is what an operator sees as "No data" on a fresh install: usually a labelled
counter that appears only on first use, or a metric name the dashboard misspells.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import promql_parser
import pytest
import yaml
from kronii.launcher.infra import free_port

from tests.mesh import Proc, standalone_env, wait_until

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DASHBOARDS = ROOT / "deploy" / "grafana" / "dashboards"
ALERT_RULES = ROOT / "deploy" / "prometheus" / "alerts.yml"
KRONII = str(Path(sys.executable).parent / "kronii")
PROMETHEUS = shutil.which("prometheus")
# Grafana's built-in interval variables, as a dashboard opened on the last hour would set them.
GRAFANA_INTERVALS = {"__rate_interval": "1m", "__interval": "15s", "__range": "1h"}
# Prometheus makes these itself; ALERTS holds series only while an alert is pending or firing, so
# its empty answer on a healthy mesh is the truth, not a gap.
SYNTHETIC_SERIES = {"up", "ALERTS"}


@dataclass(frozen=True)
class Scraped:
    url: str
    services: dict[str, str]  # service name -> host:port of its HTTP server

    def query(self, expr: str) -> dict[str, Any]:
        response = httpx.get(f"{self.url}/api/v1/query", params={"query": expr}, timeout=10)
        body: dict[str, Any] = response.json()
        return body

    def metric_names(self) -> set[str]:
        body = httpx.get(f"{self.url}/api/v1/label/__name__/values", timeout=10).json()
        return set(body["data"])


def expand_grafana_variables(expr: str) -> str:
    """Built-in intervals become durations; template variables ($service, $instance) match anything."""

    def value(match: re.Match[str]) -> str:
        return GRAFANA_INTERVALS.get(match.group(1), ".*")

    return re.sub(r"\$\{?(\w+)(?::\w+)?\}?", value, expr)


def dashboard_queries() -> list[tuple[str, str]]:
    """(where, expression) for every panel target and every label_values() variable of every dashboard."""
    queries: list[tuple[str, str]] = []
    for path in sorted(DASHBOARDS.glob("*.json")):
        board = json.loads(path.read_text())
        panels = [p for top in board.get("panels", []) for p in (top, *top.get("panels", []))]
        for panel in panels:
            for target in panel.get("targets", []):
                if target.get("expr"):
                    queries.append((f"{path.stem}: {panel['title']} [{target['refId']}]", target["expr"]))
        for variable in board.get("templating", {}).get("list", []):
            query = variable.get("query")
            text = query.get("query", "") if isinstance(query, dict) else str(query or "")
            found = re.fullmatch(r"label_values\((?P<expr>.+),\s*\w+\)", text.strip())
            if variable.get("type") == "query" and found:
                queries.append((f"{path.stem}: ${variable['name']}", found.group("expr")))
    return queries


def alert_rules() -> list[dict[str, Any]]:
    groups = yaml.safe_load(ALERT_RULES.read_text())["groups"]
    return [rule for group in groups for rule in group["rules"]]


def selected_metric_names(expr: str) -> set[str]:
    names: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, promql_parser.VectorSelector) and node.name:
            names.add(node.name)

    promql_parser.walk(promql_parser.parse(expr), visit)
    return names


def _prometheus_config(services: dict[str, str]) -> dict[str, Any]:
    # The same job and target labels as deploy/prometheus (targets/*.yml), which the dashboards and
    # rules select on; 1 s scrapes so a 1m rate has samples within seconds.
    return {
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(ALERT_RULES)],
        "scrape_configs": [
            {
                "job_name": "kronii",
                "metrics_path": "/metrics",
                "static_configs": [
                    {"targets": [address], "labels": {"component": name, "placement": "host"}}
                    for name, address in sorted(services.items())
                ],
            }
        ],
    }


def _service_addresses(data_dir: Path) -> dict[str, str]:
    state = json.loads((data_dir / "run" / "up.json").read_text())
    return {name: urlsplit(service["http"]).netloc for name, service in state["services"].items()}


def _wait_for_samples(scraped: Scraped, prometheus: Proc) -> None:
    """Every target up, with enough samples behind it for rate() over the shortest window."""

    def enough() -> bool:
        assert prometheus.process.poll() is None, prometheus.output[-3000:]
        try:
            # Until its storage is open Prometheus answers 503 in plain text.
            response = httpx.get(f"{scraped.url}/api/v1/targets", timeout=5)
        except httpx.TransportError:
            return False
        if response.status_code != 200:
            return False
        targets = response.json()["data"]["activeTargets"]
        if len(targets) != len(scraped.services) or any(t["health"] != "up" for t in targets):
            return False
        samples = scraped.query('min(count_over_time(up{job="kronii"}[1m]))')["data"]["result"]
        return bool(samples) and float(samples[0]["value"][1]) >= 5

    wait_until(enough, 60, "every kronii target up with 5 scrapes behind it", interval=0.5)


@pytest.fixture(scope="module")
def scraped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scraped]:
    if PROMETHEUS is None:
        pytest.fail("prometheus is missing: `make sysdeps` installs it (Debian package `prometheus`)")
    work = tmp_path_factory.mktemp("prometheus-e2e")
    data_dir = work / "kronii-data"
    kronii = Proc([KRONII, "up"], {**standalone_env(data_dir), "KRONII_TEST_FAST_PG": "1"})
    prometheus: Proc | None = None
    try:
        kronii.wait_for_line(lambda line: line.strip() == "kronii is up", 120)
        services = _service_addresses(data_dir)
        config = work / "prometheus.yml"
        config.write_text(yaml.safe_dump(_prometheus_config(services)))
        port = free_port()
        prometheus = Proc(
            [
                PROMETHEUS,
                f"--config.file={config}",
                f"--storage.tsdb.path={work / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--log.level=warn",
            ],
            dict(os.environ),
            cwd=work,
        )
        result = Scraped(f"http://127.0.0.1:{port}", services)
        _wait_for_samples(result, prometheus)
        yield result
    finally:
        if prometheus is not None:
            prometheus.terminate(timeout=15)
        kronii.terminate(timeout=20)


def test_prometheus_scrapes_every_service_kronii_up_starts(scraped: Scraped) -> None:
    answer = scraped.query('up{job="kronii"} == 1')["data"]["result"]

    assert {series["metric"]["component"] for series in answer} == set(scraped.services)
    assert {"sensor", "capture", "pipeline", "scheduler", "supervisor"} <= set(scraped.services)


def test_every_dashboard_query_answers_with_data(scraped: Scraped) -> None:
    queries = dashboard_queries()
    assert len(queries) > 100, "the dashboards were not found"
    empty, failed = [], []
    for where, expr in queries:
        expanded = expand_grafana_variables(expr)
        body = scraped.query(expanded)
        if body.get("status") != "success":
            failed.append(f"{where}: {expanded}\n    {body.get('error')}")
        elif not body["data"]["result"] and not selected_metric_names(expanded) <= SYNTHETIC_SERIES:
            empty.append(f"{where}: {expanded}")
    assert not failed, "queries Prometheus refused:\n" + "\n".join(failed)
    assert not empty, "queries with no data on a fresh `kronii up`:\n" + "\n".join(empty)


def test_every_dashboard_metric_is_exported(scraped: Scraped) -> None:
    exported = scraped.metric_names() | SYNTHETIC_SERIES
    missing = {
        f"{where}: {name}"
        for where, expr in dashboard_queries()
        for name in selected_metric_names(expand_grafana_variables(expr)) - exported
    }
    assert not missing, "dashboard series no service exports:\n" + "\n".join(sorted(missing))


def test_every_alert_rule_parses_and_names_only_exported_metrics(scraped: Scraped) -> None:
    exported = scraped.metric_names()
    rules = alert_rules()
    assert rules, f"no rules in {ALERT_RULES.name}"
    problems = []
    for rule in rules:
        names = selected_metric_names(rule["expr"])
        if not names:
            problems.append(f"{rule['alert']}: selects no series")
        problems += [f"{rule['alert']}: {name} is not exported" for name in sorted(names - exported)]
        body = scraped.query(rule["expr"])
        if body.get("status") != "success":
            problems.append(f"{rule['alert']}: Prometheus refused it: {body.get('error')}")
    assert not problems, "\n".join(problems)


def test_prometheus_evaluates_every_alert_rule_without_error(scraped: Scraped) -> None:
    def evaluated() -> list[dict[str, Any]]:
        groups = httpx.get(f"{scraped.url}/api/v1/rules", timeout=5).json()["data"]["groups"]
        return [rule for group in groups for rule in group["rules"]]

    never = "0001-01-01T00:00:00Z"
    wait_until(lambda: all(rule["lastEvaluation"] != never for rule in evaluated()), 10, "a rule evaluation")
    loaded = evaluated()

    assert {rule["name"] for rule in loaded} == {rule["alert"] for rule in alert_rules()}
    unhealthy = [f"{rule['name']}: {rule.get('lastError')}" for rule in loaded if rule["health"] != "ok"]
    assert not unhealthy, "\n".join(unhealthy)
