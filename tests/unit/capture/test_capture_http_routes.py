"""The HTTP edge in process (api.http_api): an agent signs in, requests a capture, reads the screenshot
once; the routes only translate, so everything behind them is the orchestration on fakes."""

from __future__ import annotations

from collections.abc import Callable

import httpx
from fastapi import FastAPI
from kronii.capture.api.http_api import capture_router
from kronii.capture.core.breaker import CircuitBreaker
from kronii.capture.core.capabilities import AGENT_DEFAULT
from kronii.capture.usecases.guard_access import Guard
from kronii.capture.usecases.operations import CaptureOperations
from kronii.foundation.errors import Unavailable

from tests.unit.capture import capture_fakes as fakes
from tests.unit.capture.test_capture_job_use_case import Rig, rig


def desk_of(setup: Rig) -> CaptureOperations:
    guard = Guard(
        settings=fakes.settings(),
        clients=fakes.Clients(AGENT_DEFAULT),
        presence=fakes.PresenceProof(None),
        peers=lambda peer: None,
        breaker=CircuitBreaker(),
        metrics=setup.metrics,
        record=setup.audit,
        clock=setup.clock,
    )
    return CaptureOperations(guard, setup.intake, setup.board, setup.screenshots, setup.desktop)


def client(desk: Callable[[], CaptureOperations]) -> httpx.AsyncClient:
    app = FastAPI()
    app.include_router(capture_router(desk))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://capture")


async def sign_in(http: httpx.AsyncClient) -> dict[str, str]:
    challenge = (await http.post("/v1/capture/challenge", json={"client_id": "agent-1"})).json()
    session = await http.post(
        "/v1/capture/authenticate",
        json={
            "challenge_id": challenge["challenge_id"],
            "client_id": "agent-1",
            "signature_hex": b"good".hex(),
        },
    )
    assert session.status_code == 200, session.text
    return {"authorization": f"Bearer {session.json()['session_token']}"}


async def test_an_agent_requests_a_capture_and_reads_its_screenshot_once_over_http() -> None:
    setup = rig()
    desk = desk_of(setup)
    async with client(lambda: desk) as http:
        headers = await sign_in(http)
        requested = await http.post(
            "/v1/capture/requests", json={"process_id": 4242, "window_id": 77}, headers=headers
        )
        job_id = requested.json()["job_id"]
        await setup.scheduler.round()
        fakes.focus(setup.view)
        setup.clock.advance(5_000)
        await setup.scheduler.round()

        result = (await http.get(f"/v1/capture/jobs/{job_id}", headers=headers)).json()
        screenshot_id = result["primary_screenshot_id"]
        issued = await http.post(f"/v1/capture/screenshots/{screenshot_id}/token", headers=headers)
        token = issued.json()["single_use_token"]
        first = await http.get(f"/v1/screenshots/{screenshot_id}", params={"token": token}, headers=headers)
        second = await http.get(f"/v1/screenshots/{screenshot_id}", params={"token": token}, headers=headers)

    assert requested.status_code == 200 and requested.json()["merged"] is False
    assert result["status"] == "PERSISTED"
    assert first.status_code == 200 and first.content == b"redacted-png"
    assert first.headers["x-redaction-level"] == "green"
    assert second.status_code == 403


async def test_a_call_without_a_session_is_refused_and_audited() -> None:
    setup = rig()
    desk = desk_of(setup)
    async with client(lambda: desk) as http:
        refused = await http.get("/v1/capture/screenshots")

    assert refused.status_code == 401
    [row] = setup.audit.rows
    assert row["action"] == "capture.list" and row["outcome"] == "unauthenticated"
    assert row["actor"].startswith("peer:") and row["client_kind"] == "unknown"


async def test_before_the_service_has_started_every_route_answers_unavailable() -> None:
    def not_started() -> CaptureOperations:
        raise Unavailable("the capture service is starting")

    async with client(not_started) as http:
        request = await http.post("/v1/capture/requests", json={})
        challenge = await http.post("/v1/capture/challenge", json={"client_id": "agent-1"})

    assert request.status_code == 503 and challenge.status_code == 503
    assert request.json()["detail"] == "the capture service is starting"
