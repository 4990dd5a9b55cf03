"""Hostile HTTP input against the five real services: each case an audit once answered with a 500
or took in whole is now a 4xx whose body is JSON with a one-sentence `detail`."""

from __future__ import annotations

import asyncio
import hashlib
import re
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from kronii.stores.audit import DETAIL_VALUE_CAP, AuditLog
from kronii.stores.db import make_engine, make_sessionmaker

from tests.integration.common.hostile_support import SERVICES, Mesh, Service

TEN_MB = 10 * 1024 * 1024
DEEP = b"[" * 5_000 + b"]" * 5_000
# Nothing a caller sees names a Python class or a module.
_PYTHON_NAME = re.compile(r"<class |Traceback|[a-z_]+\.[a-z_]+\.[A-Za-z_]+Error")


def refused(response: httpx.Response, *statuses: int) -> str:
    """The sentence of a refusal with one of `statuses`; fails on anything else."""
    assert response.status_code in statuses, (response.status_code, response.text[:500])
    body = response.json()
    detail = body["detail"]
    assert isinstance(detail, str) and detail.strip(), body
    assert not _PYTHON_NAME.search(detail), detail
    return detail


def _concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "x1", path)


def _posts(service: Service) -> list[str]:
    document = httpx.get(f"{service.url}/openapi.json", timeout=10).json()
    return [_concrete(path) for path, item in document["paths"].items() if "post" in item]


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as http:
        yield http


@pytest.mark.parametrize("name", ["pipeline", "scheduler", "supervisor", "capture"])
def test_deeply_nested_json_on_every_post_is_a_400(mesh: Mesh, client: httpx.Client, name: str) -> None:
    service = mesh[name]
    posts = _posts(service)
    assert posts, f"{name} documents no POST route"
    for path in posts:
        response = client.post(
            service.url + path, content=DEEP, headers={**service.headers, "content-type": "application/json"}
        )
        assert "nested more than 32 levels" in refused(response, 400), path


@pytest.mark.parametrize("before", ["9223372036854775808", "1e100", "NaN", "Infinity", "-1"])
def test_runs_before_out_of_range_is_a_400_naming_before(
    mesh: Mesh, client: httpx.Client, before: str
) -> None:
    response = client.get(f"{mesh['pipeline'].url}/v1/runs", params={"before": before})
    assert "before" in refused(response, 400)


def test_runs_before_in_range_still_pages(mesh: Mesh, client: httpx.Client) -> None:
    response = client.get(f"{mesh['pipeline'].url}/v1/runs", params={"before": "1700000000.5", "limit": 5})
    assert response.status_code == 200, response.text
    assert response.json()["runs"] == []


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("pipeline", "/v1/runs/%00"),
        ("pipeline", "/v1/plugins/%00"),
        ("pipeline", "/v1/controls/%00"),
        ("supervisor", "/v1/runtimes/%00"),
        ("supervisor", "/v1/triggers/%00"),
        ("supervisor", "/v1/runtimes/%00/logs"),
        ("capture", "/v1/capture/jobs/%00"),
    ],
)
def test_nul_in_an_id_is_a_400(mesh: Mesh, client: httpx.Client, name: str, path: str) -> None:
    service = mesh[name]
    method = "DELETE" if "/controls/" in path else "GET"
    response = client.request(method, service.url + path, headers=service.headers)
    assert "control or bidirectional-formatting character (U+0000)" in refused(response, 400)


@pytest.mark.parametrize("character", ["\u202e", "\x1b", "\u2066"])
def test_bidi_and_control_characters_in_ids_and_queries_are_a_400(
    mesh: Mesh, client: httpx.Client, character: str
) -> None:
    supervisor = mesh["supervisor"]
    escaped = quote(character)  # percent-encoded, as a client must send it
    in_path = client.get(f"{supervisor.url}/v1/runtimes/rt{escaped}1", headers=supervisor.headers)
    assert f"U+{ord(character):04X}" in refused(in_path, 400)
    in_query = client.get(f"{mesh['pipeline'].url}/v1/runs", params={"decision": f"x{character}"})
    assert "query string" in refused(in_query, 400)


def test_five_thousand_character_window_id_is_refused(mesh: Mesh, client: httpx.Client) -> None:
    digits = "7" * 5_000
    trigger = client.post(
        f"{mesh['pipeline'].url}/v1/triggers",
        json={"kind": "focus_changed", "source": "test", "attributes": {"window_id": digits}},
    )
    assert "window_id" in refused(trigger, 422)
    capture = mesh["capture"]
    as_number = client.post(
        f"{capture.url}/v1/capture/requests",
        content=b'{"window_id": ' + digits.encode() + b"}",
        headers={"content-type": "application/json"},
    )
    refused(as_number, 400, 401, 422)
    as_text = client.post(f"{capture.url}/v1/capture/requests", json={"window_id": digits})
    refused(as_text, 401, 422)


@pytest.mark.parametrize("client_id", ["agent\x00one", "agent\u202eone", "a" * 65, ""])
def test_bad_capture_client_id_is_a_4xx_sentence(mesh: Mesh, client: httpx.Client, client_id: str) -> None:
    response = client.post(f"{mesh['capture'].url}/v1/capture/challenge", json={"client_id": client_id})
    assert "client_id" in refused(response, 422)


def test_a_good_capture_client_id_still_gets_a_challenge(mesh: Mesh, client: httpx.Client) -> None:
    response = client.post(f"{mesh['capture'].url}/v1/capture/challenge", json={"client_id": "agent-1"})
    assert response.status_code == 200, response.text
    assert len(response.json()["nonce_hex"]) > 0


_BODY_ROUTES = {
    "sensor": ("GET", "/v1/snapshot"),
    "capture": ("POST", "/v1/capture/challenge"),
    "pipeline": ("POST", "/v1/triggers"),
    "scheduler": ("POST", "/v1/plans"),
    "supervisor": ("POST", "/v1/triggers"),
    "broker": ("POST", "/sessions/current/agent/input"),
    "critic": ("POST", "/v1/critic/events"),
    "vision": ("POST", "/v1/vision/plans"),
}


@pytest.mark.parametrize("name", SERVICES)
def test_ten_megabyte_body_is_a_413_on_every_service(mesh: Mesh, client: httpx.Client, name: str) -> None:
    service = mesh[name]
    method, path = _BODY_ROUTES[name]
    response = client.request(
        method, service.url + path, content=b"{" + b" " * TEN_MB + b"}", headers=service.headers
    )
    assert "larger than this route's limit of 1048576 bytes" in refused(response, 413)


@pytest.mark.parametrize("name", ["pipeline", "scheduler", "supervisor"])
def test_a_streamed_body_without_length_is_counted_and_refused(
    mesh: Mesh, client: httpx.Client, name: str
) -> None:
    service = mesh[name]
    chunk = b" " * 65_536

    def body() -> Iterator[bytes]:
        yield b"{"
        for _ in range(20):  # 1.25 MB, chunked: no Content-Length to refuse up front
            yield chunk
        yield b"}"

    response = client.post(service.url + _BODY_ROUTES[name][1], content=body(), headers=service.headers)
    assert "Content-Length" not in response.request.headers
    assert "larger than this route's limit" in refused(response, 413)


def test_pipeline_trigger_kinds_are_taken_exactly(mesh: Mesh, client: httpx.Client) -> None:
    url = f"{mesh['pipeline'].url}/v1/triggers"
    for kind in ("TICK", "manual\n", " tick", "Manual"):
        assert "kind must be one of" in refused(client.post(url, json={"kind": kind, "source": "t"}), 422)
    accepted = client.post(url, json={"kind": "manual", "source": "hostile-test"})
    assert accepted.status_code == 202, accepted.text


def _spawn(service: Service, client: httpx.Client, **fields: Any) -> httpx.Response:
    body = {"workspace_id": "hostile", "agent_id": f"a{uuid.uuid4().hex[:6]}", "command": ["true"], **fields}
    return client.post(f"{service.url}/v1/runtimes/spawn", json=body, headers=service.headers)


def test_spawn_refuses_an_unconfigured_kind_and_a_missing_cwd(
    mesh: Mesh, client: httpx.Client, tmp_path_factory: pytest.TempPathFactory
) -> None:
    supervisor = mesh["supervisor"]
    evil = _spawn(supervisor, client, kind="evil")
    assert "kind must be a configured agent kind" in refused(evil, 400)
    missing = tmp_path_factory.mktemp("cwd") / "does-not-exist"
    nowhere = _spawn(supervisor, client, kind="generic", cwd=str(missing))
    assert "cwd must be an existing directory" in refused(nowhere, 400)
    assert str(missing) not in nowhere.text


def test_a_huge_audit_detail_is_stored_capped_and_the_chain_verifies(
    mesh: Mesh, client: httpx.Client
) -> None:
    supervisor = mesh["supervisor"]
    reason = "r" * 900_000
    trigger_id = f"t-{uuid.uuid4().hex[:10]}"
    body = {"trigger_id": trigger_id, "agent_id": "nobody-here", "workspace_id": "hostile", "thread_id": "th1",
            "prompt": "hello", "reason": reason}  # fmt: skip
    response = client.post(f"{supervisor.url}/v1/triggers", json=body, headers=supervisor.headers)
    # No such agent: refused, and the refusal is an audit row carrying the reason, capped.
    assert response.status_code == 404, response.text
    row = asyncio.run(_audit_row(mesh.database, trigger_id))
    assert row.outcome == "not_found"
    stored = row.detail["reason"]
    assert stored == {
        "truncated": reason[:DETAIL_VALUE_CAP],
        "length": len(reason),
        "sha256": hashlib.sha256(reason.encode()).hexdigest(),
    }
    assert len(str(row.detail)) < 3 * DETAIL_VALUE_CAP


async def _audit_row(database: str, subject: str) -> Any:
    engine = make_engine(database)
    try:
        audit = AuditLog(make_sessionmaker(engine), "test")
        for _ in range(100):
            rows = [row for row in await audit.tail(200) if row.subject == subject]
            if rows:
                report = await audit.verify()
                assert report.ok, report
                return rows[-1]
            await asyncio.sleep(0.1)
        raise AssertionError(f"no audit row for {subject}")
    finally:
        await engine.dispose()


@pytest.mark.parametrize("character", ["\u202e", "\u2066", "\x1b", "\x00", "\x85"])
def test_an_intent_that_could_disguise_what_the_person_approves_is_a_400(
    mesh: Mesh, client: httpx.Client, character: str
) -> None:
    """The person approves a plan by reading its intent in a notification or a terminal: a bidi override
    or an escape sequence from an agent would show them other words than the ones planned."""
    vision = mesh["vision"]
    response = client.post(f"{vision.url}/v1/vision/plans", json={"intent": f"click {character}OK"})
    assert f"U+{ord(character):04X}" in refused(response, 400)


def test_an_intent_pasted_with_line_breaks_is_still_planned(mesh: Mesh, client: httpx.Client) -> None:
    vision = mesh["vision"]
    response = client.post(f"{vision.url}/v1/vision/plans", json={"intent": "click\n\tthe OK button\r\n"})
    assert response.status_code == 200, response.text
    assert response.json()["state"] == "blocked", "no OK button on the mesh's empty desktop"
