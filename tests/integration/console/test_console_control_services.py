"""The Control page's adapters and use cases against REAL services: an input broker on Xvfb (its
state, the lease's time left, Stop revoking a live lease so the agent's next key is refused, WAIT
refused because only the desktop user at a terminal may say it) and a vision engine reading a real
GTK form (a plan flagged by R4 with the two elements named OK and their boxes, Deny from the console,
and an approval from a process with no terminal refused by the engine with its sentence)."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from kronii.console.adapters.broker_api import BrokerApi
from kronii.console.adapters.service_clients import HttpServiceClients
from kronii.console.adapters.vision_api import SOCKET_NAME, VisionApi
from kronii.console.core.control import DesktopState, PlanView
from kronii.console.ports import ServiceNotAnswering
from kronii.console.usecases.show_control import ControlView, ShowControl
from kronii.console.usecases.steer_control import SteerControl
from kronii.foundation.clock import SystemClock
from kronii.foundation.errors import PermissionDenied
from kronii.runtime.rendezvous import local_socket_path

from tests.infra import InfraUrls
from tests.integration.broker.broker_support import Broker, start_broker
from tests.integration.broker.conftest import recording_terminal, x_display  # noqa: F401 (fixtures)
from tests.integration.vision.conftest import FORM_SECRET
from tests.integration.vision.vision_desktop import A11yDesktop, GtkForm, start_a11y_desktop, start_gtk_form
from tests.integration.vision.vision_service_support import VisionEngine, clicked, start_vision

T = TypeVar("T")
PERSON = "person:uid:test"
INTERACTIVE = {"KRONII_BROKER_INTERACTIVE": "true", "KRONII_BROKER_REMOTE_VIEW": "false"}


class Rows:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    async def __call__(
        self, *, actor: str, action: str, subject: str = "", outcome: str = "", **detail: Any
    ) -> None:
        self.rows.append({"actor": actor, "action": action, "subject": subject, "outcome": outcome, **detail})


@pytest.fixture
def broker(infra: InfraUrls, migrated_database: str, x_display: str, tmp_path: Path) -> Iterator[Broker]:  # noqa: F811
    with start_broker(infra, migrated_database, x_display, tmp_path, settings=INTERACTIVE) as running:
        yield running


def _run(urls: dict[str, str], socket: Path, body: Callable[[BrokerApi, VisionApi], Awaitable[T]]) -> T:
    """`body` with the console's real service clients, on an event loop of its own (the broker and
    vision helpers of the tests run their own loops, so the tests are plain functions)."""

    async def run() -> T:
        clients = HttpServiceClients(urls, api_token=None, timeout_secs=30)
        try:
            # Grant and renew go through the broker's socket (tested in test_console_control_grant_page
            # and the approval's e2e); these tests use its HTTP surface only.
            return await body(BrokerApi(clients, socket.with_name("broker.sock")), VisionApi(clients, socket))
        finally:
            await clients.close()

    return asyncio.run(run())


def test_stop_from_the_console_revokes_the_live_lease_and_the_agents_next_key_is_refused(
    broker: Broker,
    recording_terminal: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    terminal = recording_terminal("ConsoleStop")
    agent = broker.agent(f"agent-{uuid.uuid4().hex[:6]}")
    broker.grant(agent.client_id, seconds=40, window=terminal.window_id)
    assert agent.type_text("before").injected
    audit = Rows()

    async def stop(broker_api: BrokerApi, vision: VisionApi) -> tuple[ControlView, DesktopState, ControlView]:
        show = ShowControl(broker_api, vision, SystemClock())
        before = await show.view()
        stopped = await SteerControl(broker_api, vision, audit).intent(PERSON, "stop")
        return before, stopped, await show.view()

    urls = {"broker": broker.url, "vision": "http://127.0.0.1:9"}
    view, stopped, after = _run(urls, tmp_path / "no" / SOCKET_NAME, stop)
    assert view.desktop is not None and view.desktop.holder == agent.client_id
    assert view.seconds_left is not None and 30 < view.seconds_left <= 40, view.seconds_left
    assert view.holder.startswith(f"{agent.client_id} (an agent), ") and "left on its lease" in view.holder
    assert view.problems == ("vision is not answering: it cannot be reached (is `kronii up` running it?)",)

    assert stopped.control_mode == "USER" and stopped.user_intent == "STOP_NOW"
    assert agent.key("Return").dropped == "stopped"
    assert broker.state()["control_mode"] == "USER"
    row = audit.rows[-1]
    assert (row["actor"], row["action"], row["subject"], row["holder"]) == (
        PERSON,
        "console.control.stop",
        stopped.session_id,
        agent.client_id,
    ), row
    assert row["outcome"].startswith("USER STOP_NOW"), row
    assert after.seconds_left is None and after.holder.startswith("you"), after.holder


def test_wait_from_the_console_is_refused_by_the_broker_with_its_sentence(
    broker: Broker, tmp_path: Path
) -> None:
    audit = Rows()

    async def wait(broker_api: BrokerApi, vision: VisionApi) -> DesktopState:
        return await SteerControl(broker_api, vision, audit).intent(PERSON, "wait")

    with pytest.raises(ServiceNotAnswering) as refused:
        _run({"broker": broker.url}, tmp_path / SOCKET_NAME, wait)
    assert refused.value.status == 403 and "broker refused: " in str(refused.value)
    assert audit.rows[-1]["outcome"] == "refused"


# ---- vision -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def desktop() -> Iterator[A11yDesktop]:
    with start_a11y_desktop() as running:
        yield running


@pytest.fixture(scope="module")
def engine(
    infra: InfraUrls, migrated_database: str, desktop: A11yDesktop, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[VisionEngine]:
    with start_vision(
        infra, migrated_database, desktop, tmp_path_factory.mktemp("console-vision")
    ) as running:
        yield running


@pytest.fixture
def form(desktop: A11yDesktop, engine: VisionEngine) -> Iterator[GtkForm]:
    with start_gtk_form(desktop, FORM_SECRET) as opened:
        deadline = time.monotonic() + 10
        while "Cancel" not in httpx.get(f"{engine.url}/v1/vision/context", timeout=30).text:
            assert time.monotonic() < deadline, "the engine never saw the form"
            time.sleep(0.1)
        yield opened


def _socket(engine: VisionEngine) -> Path:
    return local_socket_path(
        SOCKET_NAME, engine.folder / "data", runtime_dir=engine.env.get("XDG_RUNTIME_DIR")
    )


def test_a_plan_flagged_by_r4_waits_with_both_ok_buttons_and_deny_from_the_console_ends_it(
    engine: VisionEngine, form: GtkForm
) -> None:
    plan = engine.plan("click the OK button")
    assert plan["state"] == "awaiting_confirmation" and "R4" in plan["safety_rows"], plan
    audit = Rows()

    async def look_then_deny(broker_api: BrokerApi, vision: VisionApi) -> tuple[ControlView, PlanView]:
        view = await ShowControl(broker_api, vision, SystemClock()).view()
        return view, await SteerControl(broker_api, vision, audit).deny(PERSON, plan["plan_id"])

    urls = {"vision": engine.url, "broker": engine.broker.url}
    view, denied = _run(urls, _socket(engine), look_then_deny)
    (waiting,) = [p for p in view.waiting if p.plan_id == plan["plan_id"]]
    (ambiguity,) = waiting.ambiguities
    assert ambiguity.name == "OK" and len(ambiguity.candidates) == 2
    assert len({box for _, _, box in ambiguity.candidates if box}) == 2, "each OK button has its own box"
    assert "R4" in waiting.safety_rows and view.desktop is not None
    assert denied.state == "denied" and engine.get(plan["plan_id"])["state"] == "denied"
    assert audit.rows[-1]["action"] == "console.control.deny" and audit.rows[-1]["outcome"] == "denied"
    time.sleep(0.5)
    assert not clicked(form.seen, "OK")


def test_an_approval_from_the_console_without_a_proof_of_presence_is_refused_by_the_engine(
    engine: VisionEngine, form: GtkForm
) -> None:
    plan = engine.plan("click the OK button")
    audit = Rows()

    async def approve(broker_api: BrokerApi, vision: VisionApi) -> PlanView:
        return await SteerControl(broker_api, vision, audit).approve(PERSON, plan["plan_id"])

    with pytest.raises(PermissionDenied, match="kronii vision approve " + plan["plan_id"]):
        _run({"vision": engine.url}, _socket(engine), approve)
    assert audit.rows[-1]["outcome"] == "refused"
    assert engine.get(plan["plan_id"])["state"] == "awaiting_confirmation"
    httpx.post(f"{engine.url}/v1/vision/plans/{plan['plan_id']}/deny", timeout=10)
