"""Grant and Renew on the Control page in process: the real router, templates and edge (sessions in
memory, CSRF) with the Control page's real adapters; the broker's state over the console's service
clients answered in process, and the broker's local socket a real Unix socket served by uvicorn (what
the console sends there is what `kronii control grant|renew` send: the path, the body, the TTY
binding headers). A state change without the CSRF token, a bad agent or length never reaches the
socket; the broker's refusal is the page's sentence with the terminal command that works.
What only the real broker and polkitd show is in tests/e2e/console/test_console_control_approve.py."""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from kronii.console.adapters.broker_api import BrokerApi
from kronii.console.adapters.sessions import MemorySessions
from kronii.console.adapters.vision_api import VisionApi
from kronii.console.api.pages import discovered_pages
from kronii.console.api.security import ConsoleEdge, EdgeState, NavEntry
from kronii.console.app import ConsoleApp
from kronii.console.compose.control import ControlState
from kronii.console.settings import ConsoleSettings
from kronii.console.usecases.live_updates import LiveHub
from kronii.console.usecases.show_control import ShowControl
from kronii.console.usecases.sign_in import SignIn
from kronii.console.usecases.steer_control import SteerControl
from kronii.edge.limits import install_limits
from kronii.edge.presence_rules import SESSION_HEADER, TTY_HEADER
from kronii.foundation.clock import ManualClock

from tests.unit.console.console_records_harness import FakeServices, Pages, csrf_of

NOW = 1_796_569_200.0
REFUSAL = "polkit does not allow this user to give an agent the desktop"
PLAN = {"plan_id": "p_1", "intent": "click the OK button", "state": "awaiting_confirmation",
        "safety_rows": ["R4"], "actions": [{"description": "click OK [e4]", "require_confirmation": True}]}  # fmt: skip


def _stamp(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")


@dataclass
class SocketBroker:
    """The broker's local socket: grants and extensions as the broker answers them, every call kept."""

    state: dict[str, Any] = field(default_factory=lambda: {"session_id": "s1", "control_mode": "USER"})
    refuse: bool = False
    calls: list[tuple[str, dict[str, Any], dict[str, str]]] = field(default_factory=list)

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/sessions/current/control/{verb}")
        async def control(verb: str, request: Request) -> JSONResponse:
            body = await request.json()
            self.calls.append((verb, body, dict(request.headers)))
            if self.refuse:
                return JSONResponse({"code": "PERMISSION_DENIED", "detail": REFUSAL}, status_code=403)
            holder = body.get("agent") or self.state.get("holder", "")
            expiry = _stamp(NOW + body["lease_seconds"])
            self.state = {**self.state, "control_mode": "AGENT", "holder": holder, "lease_expiry": expiry}
            return JSONResponse(self.state)

        return app


@contextlib.asynccontextmanager
async def _serving(broker: SocketBroker) -> AsyncIterator[Path]:
    # A short directory: a Unix socket's path is at most 107 bytes.
    with tempfile.TemporaryDirectory(prefix="c3-") as where:
        socket = Path(where) / "broker.sock"
        server = uvicorn.Server(
            uvicorn.Config(broker.app(), uds=str(socket), log_level="warning", lifespan="off")
        )
        task = asyncio.create_task(server.serve())
        while not server.started:
            await asyncio.sleep(0.01)
        try:
            yield socket
        finally:
            server.should_exit = True
            await task


def _pages(services: FakeServices, socket: Path) -> Pages:
    clock = ManualClock(NOW)
    audit: list[dict[str, Any]] = []

    async def record(**row: Any) -> None:
        audit.append(row)

    settings = ConsoleSettings()
    sign_in = SignIn(MemorySessions(), clock, record, link_secs=120, idle_secs=3600)
    console = ConsoleApp(clock=clock, settings=settings)
    console._sign_in = sign_in
    console._hub = LiveHub(["control"])
    console._pages = [page for page in discovered_pages() if page.slug == "control"]
    broker = BrokerApi(services, socket, timeout_secs=5)
    vision = VisionApi(services, socket.with_name("vision.sock"))
    state = ControlState(ShowControl(broker, vision, clock), SteerControl(broker, vision, record))
    edge = EdgeState(
        sign_in=sign_in, record=record, nav=[NavEntry("control", "Control")], page_states={"control": state}
    )
    app = FastAPI()
    for router in console.routers():
        app.include_router(router)
    install_limits(app, max_body=64 * 1024)
    app.add_middleware(ConsoleEdge, state=lambda: edge, max_body=64 * 1024)
    return Pages(app, services, audit, clock)


def _services(broker: SocketBroker) -> FakeServices:
    services = FakeServices()
    services.on("broker", "GET", "/sessions/current", lambda params, body: broker.state)
    services.on("vision", "GET", "/v1/vision/plans", lambda params, body: {"plans": [PLAN]})
    return services


def _grants(audit: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [row for row in audit if row["action"].startswith("console.control.")]


async def test_the_page_offers_a_grant_with_the_waiting_plan_and_in_the_desktop_box() -> None:
    broker = SocketBroker()
    async with _serving(broker) as socket:
        pages = _pages(_services(broker), socket)
        async with pages.session() as client:
            page = (await client.get("/control")).text
    for form in ('id="grant-desktop"', 'id="grant-p_1"'):
        assert form in page
    assert page.count('<option value="vision">vision</option>') == 2
    assert page.count('<option value="2" selected>2 minutes</option>') == 2
    assert '<option value="10">10 minutes</option>' in page and '<option value="11">' not in page
    assert "acts only while the vision engine may use the desktop" in page
    assert "kronii control grant vision --seconds 120" in page


async def test_grant_reaches_the_brokers_socket_as_kronii_control_grant_does_and_is_audited() -> None:
    broker = SocketBroker()
    async with _serving(broker) as socket:
        pages = _pages(_services(broker), socket)
        async with pages.session() as client:
            token = csrf_of((await client.get("/control")).text)
            done = await client.post(
                "/control/grant", data={"agent": "vision", "minutes": "2", "csrf_token": token}
            )
    assert done.status_code == 200, done.text
    assert "vision may use the desktop until" in done.text and 'id="renew-vision"' in done.text
    assert "The vision engine holds the desktop for 120 s more" in done.text
    ((verb, body, headers),) = broker.calls
    assert (verb, body) == ("grant", {"agent": "vision", "lease_seconds": 120, "window": 0})
    assert headers[SESSION_HEADER] == str(os.getsid(0)) and TTY_HEADER in headers
    (row,) = _grants(pages.audit)
    assert (row["action"], row["subject"], row["outcome"], row["seconds"]) == (
        "console.control.grant", "vision", "AGENT vision", 120,
    )  # fmt: skip
    assert row["actor"].startswith("person")


async def test_a_grant_without_the_csrf_token_is_refused_and_never_reaches_the_broker() -> None:
    broker = SocketBroker()
    async with _serving(broker) as socket:
        pages = _pages(_services(broker), socket)
        async with pages.session() as client:
            await client.get("/control")
            refused = await client.post("/control/grant", data={"agent": "vision", "minutes": "2"})
            renew = await client.post("/control/renew", data={"agent": "vision", "minutes": "2"})
    assert (refused.status_code, renew.status_code) == (403, 403)
    assert broker.calls == [] and _grants(pages.audit) == []


@pytest.mark.parametrize(
    ("path", "form", "said"),
    [
        ("/control/grant", {"agent": "vision", "minutes": "0"}, "1 to 10 whole minutes, not &#39;0&#39;"),
        ("/control/grant", {"agent": "vision", "minutes": "600"}, "1 to 10 whole minutes, not &#39;600&#39;"),
        ("/control/grant", {"agent": "vision"}, "1 to 10 whole minutes, not &#39;&#39;"),
        ("/control/grant", {"agent": "a b", "minutes": "2"}, "is not an agent&#39;s client id"),
        ("/control/renew", {"agent": "", "minutes": "2"}, "is not an agent&#39;s client id"),
        ("/control/renew", {"agent": "vision", "minutes": "x"}, "1 to 10 whole minutes, not &#39;x&#39;"),
    ],
)
async def test_a_bad_agent_or_length_is_a_400_with_a_sentence_and_nothing_reaches_the_broker(
    path: str, form: dict[str, str], said: str
) -> None:
    broker = SocketBroker()
    async with _serving(broker) as socket:
        pages = _pages(_services(broker), socket)
        async with pages.session() as client:
            token = csrf_of((await client.get("/control")).text)
            answer = await client.post(path, data={**form, "csrf_token": token})
    assert answer.status_code == 400
    assert said in answer.text and "refused.</strong>" in answer.text
    assert broker.calls == []


async def test_a_grant_the_broker_refuses_says_its_sentence_and_the_terminal_command() -> None:
    broker = SocketBroker(refuse=True)
    async with _serving(broker) as socket:
        pages = _pages(_services(broker), socket)
        async with pages.session() as client:
            token = csrf_of((await client.get("/control")).text)
            answer = await client.post(
                "/control/grant", data={"agent": "vision", "minutes": "3", "csrf_token": token}
            )
    assert answer.status_code == 403
    assert "Grant refused.</strong>" in answer.text
    assert "kronii control grant vision --seconds 180 in a terminal" in answer.text
    assert f"(the broker said: {REFUSAL})" in answer.text and "polkit&#39;s dialog" in answer.text
    assert [(r["action"], r["outcome"]) for r in _grants(pages.audit)] == [
        ("console.control.grant", "refused")
    ]


async def test_renew_gives_the_holder_more_time_through_the_brokers_socket() -> None:
    broker = SocketBroker()
    broker.state = {
        **broker.state,
        "control_mode": "AGENT",
        "holder": "vision",
        "lease_expiry": _stamp(NOW + 9),
    }
    async with _serving(broker) as socket:
        pages = _pages(_services(broker), socket)
        async with pages.session() as client:
            page = (await client.get("/control")).text
            done = await client.post(
                "/control/renew", data={"agent": "vision", "minutes": "5", "csrf_token": csrf_of(page)}
            )
    assert 'id="renew-vision"' in page and 'id="grant-desktop"' not in page
    assert done.status_code == 200 and "vision may use the desktop until" in done.text
    assert [(verb, body) for verb, body, _ in broker.calls] == [("extend", {"lease_seconds": 300})]
    assert [(r["action"], r["outcome"]) for r in _grants(pages.audit)] == [
        ("console.control.renew", "AGENT vision")
    ]
