"""The Control page in a real browser against a real `kronii up` on an Xvfb desktop with its own
accessibility bus, the input broker told a person is attached (KRONII_BROKER_INTERACTIVE, as a person
at the desktop is), and the vision engine's key registered (`kronii vision setup --yes`):

- an agent registered with `kronii broker clients keygen` holds the desktop on a lease the person
  granted from a terminal (`kronii control grant`); the page shows who holds it and the time its lease
  has left; Stop on the page revokes the live lease and the agent's next key is refused (dropped
  `stopped`, as the broker's API answers it); Wait, the desktop user's alone, is refused with the
  broker's sentence and changes nothing;
- a vision plan flagged by R4 (two buttons named OK on a real GTK form) waits on the page with its
  flagged rows and both boxes drawn; Approve from the page reaches the engine's local socket, which
  wants a proof of presence the console cannot give (no polkit here, no terminal): refused, with the
  engine's sentence and the command that approves from a terminal, and nothing ran; Deny ends it.

This module starts a mesh of its own (console_control_support.py; the shared one's broker sees nobody
attached, so no grant can be made there); test_console_control_approve.py approves through polkit.
Screenshots go to the test's tmp dir, to look at."""

from __future__ import annotations

import contextlib
import json
import shlex
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kronii.agents.broker_client import BrokerClient
from playwright.sync_api import Browser, Page, expect

from tests.desktop import open_window
from tests.e2e.console.conftest import KRONII, ConsoleMesh, screenshot
from tests.e2e.console.console_control_support import (
    gtk_form_seen_by_vision,
    plan_on_a_still_screen,
    start_steer_mesh,
)
from tests.integration.vision.vision_desktop import GtkForm
from tests.integration.vision.vision_service_support import clicked
from tests.terminal import run_on_terminal

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def steer_mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleMesh]:
    with contextlib.ExitStack() as stack:
        yield start_steer_mesh(stack, tmp_path_factory.mktemp("console-control") / "data")


@pytest.fixture
def control_page(steer_mesh: ConsoleMesh, console_browser: Browser) -> Iterator[Page]:
    context = console_browser.new_context(viewport={"width": 1280, "height": 860})
    try:
        page = context.new_page()
        page.goto(steer_mesh.login_link())
        page.goto(f"{steer_mesh.console_url}/control")
        yield page
    finally:
        context.close()


def _agent(mesh: ConsoleMesh, tmp_path: Path) -> BrokerClient:
    name = f"steer-{uuid.uuid4().hex[:6]}"
    key = tmp_path / f"{name}.key"
    made = mesh.kronii("broker", "clients", "keygen", name, "--key-file", str(key))
    assert made.returncode == 0, made.stdout + made.stderr
    client = BrokerClient(mesh.url("broker"), timeout=15)
    client.sign_in(name, key)
    return client


def _grant(mesh: ConsoleMesh, agent: str, window: int) -> None:
    """The person's grant, from a terminal (the broker's local socket and the TTY binding)."""
    command = shlex.join([KRONII, "control", "grant", agent, "--seconds", "90", "--window", hex(window)])
    run = run_on_terminal(command, mesh.env, timeout=60)
    assert run.code == 0, run.shown


def _state(mesh: ConsoleMesh) -> dict[str, Any]:
    return dict(httpx.get(f"{mesh.url('broker')}/sessions/current", timeout=10).json())


def test_stop_on_the_control_page_revokes_the_live_lease_and_the_agents_next_key_is_refused(
    steer_mesh: ConsoleMesh, control_page: Page, tmp_path: Path
) -> None:
    agent = _agent(steer_mesh, tmp_path)
    with open_window(steer_mesh.display, "leased notes", "ConsoleLeased") as window:
        _grant(steer_mesh, agent.client_id, window.window_id)
        assert agent.key("Return").injected, "the lease does not let the agent's key through"
        page = control_page
        page.reload()
        expect(page.locator("#holder")).to_contain_text(f"{agent.client_id} (an agent)")
        expect(page.locator("#holder")).to_contain_text("left on its lease")
        left = float(page.locator("#lease-left").get_attribute("data-seconds") or "0")
        assert 0 < left <= 90, left
        screenshot(page, tmp_path, "control-leased")

        page.get_by_role("button", name="Stop", exact=True).click()
        expect(page.locator(".said.ok")).to_contain_text("STOP_NOW")
        expect(page.locator("#holder")).to_contain_text("you")
        screenshot(page, tmp_path, "control-stopped")
        refused = agent.key("Return")
        assert not refused.injected and refused.dropped == "stopped", refused
        state = _state(steer_mesh)
        assert state["control_mode"] == "USER" and state["user_intent"] == "STOP_NOW", state

        page.get_by_role("button", name="Wait", exact=True).click()
        expect(page.locator(".said.problem")).to_contain_text("Wait refused")
        expect(page.locator(".said.problem")).to_contain_text("broker refused")
        assert _state(steer_mesh)["user_intent"] == "STOP_NOW", "WAIT from the page changed the broker"
        screenshot(page, tmp_path, "control-wait-refused")


@pytest.fixture
def form(steer_mesh: ConsoleMesh) -> Iterator[GtkForm]:
    with gtk_form_seen_by_vision(steer_mesh) as opened:
        yield opened


def test_a_plan_flagged_by_r4_waits_on_the_page_and_an_approval_without_presence_is_refused(
    steer_mesh: ConsoleMesh, control_page: Page, form: GtkForm, tmp_path: Path
) -> None:
    plan = plan_on_a_still_screen(steer_mesh, "click the OK button")
    assert plan["state"] == "awaiting_confirmation" and "R4" in plan["safety_rows"], json.dumps(plan)[:2000]
    page = control_page
    page.reload()
    shown = page.locator(f"#plan-{plan['plan_id']}")
    expect(shown).to_contain_text("click the OK button")
    expect(shown.locator(".flag").first).to_have_text("R4")
    expect(shown).to_contain_text("“OK” is 2 elements")
    expect(shown.locator("svg.screen rect.candidate")).to_have_count(2)
    screenshot(page, tmp_path, "control-plan-waiting")

    shown.get_by_role("button", name=f"Approve plan {plan['plan_id']}").click()
    refusal = page.locator(".said.problem")
    expect(refusal).to_contain_text("Approve refused")
    expect(refusal).to_contain_text(f"kronii vision approve {plan['plan_id']}")
    screenshot(page, tmp_path, "control-approve-refused")
    state = httpx.get(f"{steer_mesh.url('vision')}/v1/vision/plans/{plan['plan_id']}", timeout=10).json()[
        "state"
    ]
    assert state == "awaiting_confirmation", state

    page.locator(f"#plan-{plan['plan_id']}").get_by_role(
        "button", name=f"Deny plan {plan['plan_id']}"
    ).click()
    expect(page.locator(".said.ok")).to_contain_text(f"Plan {plan['plan_id']}: denied")
    expect(page.locator(f"#plan-{plan['plan_id']}")).to_have_count(0)
    time.sleep(0.5)
    assert not clicked(form.seen, "OK")
