"""schemathesis over each service's real OpenAPI document, against the real process over HTTP: for
a few generated requests per operation, no 5xx, no status code the document does not declare, and
every response (errors included) matches its declared schema and content type."""

from __future__ import annotations

from typing import Any

import httpx
import hypothesis
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given
from schemathesis import checks
from schemathesis.core.result import Ok

from tests.integration.common.hostile_support import SERVICES, Mesh, Service

EXAMPLES_PER_OPERATION = 5
# Server-sent events never end: a generated request would wait for the stream to close.
ENDLESS = {("GET", "/v1/notifications/stream")}
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
    checks.response_headers_conformance,
]
_SETTINGS = hypothesis.settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)


def _run(operation: Any, service: Service) -> str | None:
    """The first failure for `operation` as text, None when every example passes."""
    failure: list[str] = []

    @_SETTINGS
    @given(case=operation.as_strategy())
    def check(case: Any) -> None:
        try:
            case.call_and_validate(base_url=service.url, headers=service.headers, checks=CHECKS, timeout=20)
        except (Exception, BaseExceptionGroup) as error:
            failure.append(f"{operation.method.upper()} {operation.path}: {str(error)[:1500]}")
            raise

    try:
        check()
    except (Exception, BaseExceptionGroup):
        return failure[0] if failure else f"{operation.method.upper()} {operation.path} failed"
    return None


@pytest.mark.parametrize("name", SERVICES)
def test_service_answers_as_its_openapi_says(mesh: Mesh, name: str) -> None:
    service = mesh[name]
    schema = schemathesis.openapi.from_url(f"{service.url}/openapi.json")
    failures: list[str] = []
    ran = 0
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), (
            f"{name}'s document has an operation schemathesis cannot read: {result}"
        )
        operation = result.ok()
        if (operation.method.upper(), operation.path) in ENDLESS:
            continue
        ran += 1
        found = _run(operation, service)
        if found:
            failures.append(found)
    assert ran >= 3, f"{name} documents only {ran} operations"
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("name", SERVICES)
def test_document_declares_bearer_security_and_the_common_errors(mesh: Mesh, name: str) -> None:
    document = httpx.get(f"{mesh[name].url}/openapi.json", timeout=10).json()
    scheme = document["components"]["securitySchemes"]["bearerToken"]
    assert scheme["type"] == "http" and scheme["scheme"] == "bearer"
    for path, item in document["paths"].items():
        for method, operation in item.items():
            codes = set(operation["responses"])
            if path in ("/healthz", "/readyz", "/metrics"):
                assert "security" not in operation, path
                continue
            assert {"400", "403", "413", "503"} <= codes, (method, path, codes)
            if operation.get("security") != []:
                assert operation["security"] == [{"bearerToken": []}], (method, path)
                assert "401" in codes, (method, path)
            for code in codes - {"200", "201", "202"}:
                schema = operation["responses"][code]["content"]["application/json"]["schema"]
                if code != "503" or path != "/readyz":
                    assert schema == {"$ref": "#/components/schemas/Error"}, (method, path, code)


@pytest.mark.parametrize(
    "name", ["pipeline", "scheduler", "supervisor", "capture", "broker", "critic", "vision"]
)
def test_every_route_that_reads_a_json_body_declares_it(mesh: Mesh, name: str) -> None:
    document = httpx.get(f"{mesh[name].url}/openapi.json", timeout=10).json()
    # Routes that take no body at all (the path says everything).
    bodiless = {"/v1/plugins/{app_id}/enable", "/v1/plugins/{app_id}/disable",
                "/v1/notifications/{notification_id}/disable", "/v1/notifications/{notification_id}/accept",
                "/v1/capture/jobs/{job_id}/cancel",
                "/v1/capture/screenshots/{screenshot_id}/token", "/v1/vision/plans/{plan_id}/approve",
                "/v1/vision/plans/{plan_id}/deny", "/v1/vision/plans/{plan_id}/run"}  # fmt: skip
    for path, item in document["paths"].items():
        if "post" in item and path not in bodiless:
            body = item["post"].get("requestBody")
            assert body is not None, path
            assert body["content"]["application/json"]["schema"], path
