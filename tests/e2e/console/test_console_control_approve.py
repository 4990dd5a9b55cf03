"""Approve on the Control page, proven by polkit, in a real browser against a real `kronii up` (its own
accessibility desktop, console_control_support.py) whose services see a REAL polkitd on a private
system bus (tests/private_polkit.py: kronii's shipped org.kronii.approve-plan action file and a rule
file of the test's, in a private mount namespace) through DBUS_SYSTEM_BUS_ADDRESS, as the edge's
PolkitClient reads it:

- a vision plan flagged by R4 (two buttons named OK on a real GTK form) waits on the page with both
  boxes and a Grant; Grant on the page ("Let vision use the desktop for 2 minutes") reaches the
  broker's local socket, whose PresenceGate asks polkit about the console's process (the rule says
  YES for the grant action too), and the desktop is the engine's for 120 s, audited
  console.control.grant and the broker's broker.presence (polkit, the console's pid); Approve on the page reaches the engine's local socket, whose peer is the console's own
  process; the engine's PresenceGate asks polkit about that process (polkit's rule says YES for the
  console's user); the plan runs (the form prints the click), the page shows it done, and the audit
  has console.control.approve and the engine's vision.presence row with method "polkit" for the
  console's pid;
- the same gate and action against the same polkitd decide by the rule for a process of another user
  (polkit authorizes uid 0 for everything, so the rule for the console's user, root here, cannot
  refuse): YES proves it; NO, and the shipped defaults for a process in no active session, are
  refused with polkit's sentence, which the page then shows with the two ways to approve (the polkit
  dialog, `kronii vision approve <id>`).

Screenshots go to the test's tmp dir, to look at."""

from __future__ import annotations

import asyncio
import contextlib
import os
import pwd
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import psutil
import psycopg
import pytest
import redis.asyncio as aioredis
from kronii.broker.adapters.callers import GRANT_PURPOSE
from kronii.console.adapters.vision_api import approval_refusal
from kronii.edge.peers import PeerIdentity
from kronii.edge.polkit import PolkitClient
from kronii.edge.presence import PresenceGate, PresenceRefused
from kronii.edge.procinfo import executable_of, start_ticks
from kronii.vision.adapters.person_gate import APPROVE_PURPOSE
from playwright.sync_api import Browser, Locator, Page, expect

from tests.desktop import DesktopError
from tests.e2e.console.conftest import ConsoleMesh, screenshot
from tests.e2e.console.console_control_support import (
    gtk_form_seen_by_vision,
    plan_on_a_still_screen,
    start_steer_mesh,
)
from tests.e2e.console.console_records_support import database_url
from tests.mesh import wait_until
from tests.private_polkit import (
    POLICY_DIR,
    POLKIT_SKIPS,
    Polkitd,
    polkit_rule,
    polkit_workdir,
    private_system_bus,
)

pytestmark = [pytest.mark.e2e, *POLKIT_SKIPS]

APPROVE_ACTION = APPROVE_PURPOSE.polkit_action
# The person hands the engine the desktop first (a person watches it: docs/vision.md), from the page,
# proven by polkit as `kronii control grant vision` would be for a process with no terminal.
GRANT_ACTION = GRANT_PURPOSE.polkit_action
CONSOLE_USER = pwd.getpwuid(os.getuid()).pw_name
AS_NOBODY = ("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups")


@pytest.fixture(scope="module")
def polkit_bus() -> Iterator[tuple[str, Polkitd]]:
    with polkit_workdir() as workdir, private_system_bus(workdir) as bus:
        policies = [POLICY_DIR / f"{action}.policy" for action in (APPROVE_ACTION, GRANT_ACTION)]
        daemon = Polkitd(workdir, bus, policies)
        try:
            yield bus, daemon
        finally:
            daemon.stop()


@pytest.fixture(scope="module")
def polkit_mesh(
    polkit_bus: tuple[str, Polkitd], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ConsoleMesh]:
    bus, _ = polkit_bus
    with contextlib.ExitStack() as stack:
        data_dir = tmp_path_factory.mktemp("console-approve") / "data"
        yield start_steer_mesh(stack, data_dir, {"DBUS_SYSTEM_BUS_ADDRESS": bus})


@pytest.fixture
def control_page(polkit_mesh: ConsoleMesh, console_browser: Browser) -> Iterator[Page]:
    context = console_browser.new_context(viewport={"width": 1280, "height": 860})
    try:
        page = context.new_page()
        page.goto(polkit_mesh.login_link())
        page.goto(f"{polkit_mesh.console_url}/control")
        yield page
    finally:
        context.close()


def _console_pid(mesh: ConsoleMesh) -> int:
    """The process that serves the console's HTTP port (all of kronii's services share it by default)."""
    port = int(mesh.env["KRONII_CONSOLE_HTTP_PORT"])
    for connection in psutil.net_connections(kind="tcp"):
        address = connection.laddr
        listening = connection.status == psutil.CONN_LISTEN and connection.pid
        if listening and isinstance(address, tuple) and address[1:2] == (port,):
            return int(connection.pid or 0)
    raise AssertionError("nothing listens on the console's port")


def _audit_rows(mesh: ConsoleMesh, action: str) -> list[tuple[str, str, str, dict[str, Any]]]:
    with psycopg.connect(database_url(mesh)) as connection:
        rows = connection.execute(
            "SELECT actor, coalesce(subject, ''), outcome, detail FROM audit_log WHERE action = %s ORDER BY id",
            (action,),
        ).fetchall()
    return [(str(a), str(s), str(o), dict(d or {})) for a, s, o, d in rows]


def _yes_for_the_console_user() -> str:
    return "".join(polkit_rule(action, CONSOLE_USER, "YES") for action in (APPROVE_ACTION, GRANT_ACTION))


def _plan_state(mesh: ConsoleMesh, plan_id: str) -> dict[str, Any]:
    return dict(httpx.get(f"{mesh.url('vision')}/v1/vision/plans/{plan_id}", timeout=10).json())


def test_approve_on_the_control_page_is_proven_by_polkit_for_the_consoles_process_and_the_plan_runs(
    polkit_mesh: ConsoleMesh, polkit_bus: tuple[str, Polkitd], control_page: Page, tmp_path: Path
) -> None:
    _, polkitd = polkit_bus
    polkitd.start(_yes_for_the_console_user())
    with gtk_form_seen_by_vision(polkit_mesh) as form:
        plan = plan_on_a_still_screen(polkit_mesh, "click the OK button")
        plan_id = plan["plan_id"]
        assert plan["state"] == "awaiting_confirmation" and "R4" in plan["safety_rows"], plan
        page = control_page
        page.reload()
        shown = page.locator(f"#plan-{plan_id}")
        expect(shown.locator(".flag").first).to_have_text("R4")
        expect(shown.locator("svg.screen rect.candidate")).to_have_count(2)
        expect(shown.locator(".grant-needed")).to_contain_text("acts only while the vision engine may use")
        screenshot(page, tmp_path, "approve-waiting")

        _grant_on_the_page(page, shown, tmp_path)
        # Focus events from the sensor after the grant make the engine plan again (a new id, shown on the
        # page in the old one's place): approve the one that waits now, once it is still.
        plan_id = _waiting_one(polkit_mesh, plan_id)
        page.reload()
        shown = page.locator(f"#plan-{plan_id}")
        expect(shown.locator(".granted")).to_contain_text("The vision engine holds the desktop")

        shown.get_by_role("button", name=f"Approve plan {plan_id}").click()
        expect(page.locator(".said.ok")).to_contain_text(f"Plan {plan_id}:", timeout=60_000)
        try:
            form.expect(lambda line: line.startswith("CLICKED OK"), timeout_s=30)
        except DesktopError:
            said = page.locator(".said").inner_text()
            vision_log = [line for line in polkit_mesh.proc.lines if "vision" in line or "broker" in line]
            raise AssertionError(
                f"{said}\n{_plan_state(polkit_mesh, plan_id)}\n" + "\n".join(vision_log[-60:])
            ) from None
        wait_until(
            lambda: _plan_state(polkit_mesh, plan_id)["state"] == "done", timeout=30, what="the plan done"
        )
        ended = page.locator("#ended-heading").locator("xpath=..").locator("tr", has_text=plan_id)
        expect(ended).to_contain_text("done", timeout=15_000)
        expect(page.locator(f"#plan-{plan_id}")).to_have_count(0)
        screenshot(page, tmp_path, "approve-done")

    assert _plan_state(polkit_mesh, plan_id)["approved_by"] == f"person:uid:{os.getuid()}"
    _the_grant_was_the_pages_proven_by_polkit_for_the_consoles_process(polkit_mesh)
    approvals = [row for row in _audit_rows(polkit_mesh, "console.control.approve") if row[1] == plan_id]
    assert len(approvals) == 1 and approvals[0][2] != "refused", approvals
    proofs = [row for row in _audit_rows(polkit_mesh, "vision.presence") if row[2] == "ok"]
    assert proofs, _audit_rows(polkit_mesh, "vision.presence")
    detail = proofs[-1][3]
    assert (detail["method"], detail["polkit_action"]) == ("polkit", APPROVE_ACTION), detail
    assert detail["pid"] == _console_pid(polkit_mesh), detail
    assert detail["uid"] == os.getuid() and detail["capabilities"] == ["APPROVE"], detail


def _grant_on_the_page(page: Page, plan: Locator, tmp_path: Path) -> None:
    """The person lets the vision engine use the desktop for 2 minutes from the waiting plan's Grant."""
    grant = plan.locator("form.grant-form")
    expect(grant.get_by_label("The agent that may use the desktop")).to_have_value("vision")
    grant.get_by_label("For how many minutes").select_option("2")
    grant.get_by_role("button", name="Grant the desktop").click()
    expect(page.locator(".said.ok")).to_contain_text("vision may use the desktop until", timeout=60_000)
    expect(page.locator("#holder")).to_contain_text("vision (an agent)")
    left = float(page.locator("#lease-left").get_attribute("data-seconds") or 0)
    assert 100 < left <= 120, left
    expect(page.locator("form[id='renew-vision'] button")).to_contain_text("Renew")
    screenshot(page, tmp_path, "grant-done")


def _waiting_one(mesh: ConsoleMesh, plan_id: str, still_s: float = 5.0) -> str:
    """The plan waiting now, once it has waited ``still_s`` unchanged: ``plan_id`` or the one the engine
    made again in its place (each focus event while the grant's lease notice comes up stales the plan
    that waits, and the engine plans again)."""
    waiting = [plan_id]
    since = [time.monotonic()]

    def still() -> bool:
        plan = _plan_state(mesh, waiting[-1])
        while plan["state"] != "awaiting_confirmation" and plan.get("replanned_as"):
            waiting.append(plan["replanned_as"])
            since.append(time.monotonic())
            plan = _plan_state(mesh, waiting[-1])
        return plan["state"] == "awaiting_confirmation" and time.monotonic() - since[-1] >= still_s

    wait_until(still, timeout=60, what=f"a plan waiting still in {plan_id}'s place", interval=0.5)
    return waiting[-1]


def _the_grant_was_the_pages_proven_by_polkit_for_the_consoles_process(mesh: ConsoleMesh) -> None:
    grants = _audit_rows(mesh, "console.control.grant")
    assert [(row[1], row[2], row[3]["seconds"]) for row in grants] == [("vision", "AGENT vision", 120)], (
        grants
    )
    assert grants[0][0] == f"person:uid:{os.getuid()}", grants
    proofs = [row[3] for row in _audit_rows(mesh, "broker.presence") if row[2] == "ok"]
    assert proofs, _audit_rows(mesh, "broker.presence")
    assert (proofs[-1]["method"], proofs[-1]["polkit_action"]) == ("polkit", GRANT_ACTION), proofs[-1]
    assert proofs[-1]["pid"] == _console_pid(mesh), proofs[-1]


@contextlib.contextmanager
def _process_of_nobody() -> Iterator[PeerIdentity]:
    """A process of another user, as the kernel would name it on the engine's socket."""
    process = subprocess.Popen([*AS_NOBODY, "sleep", "120"], start_new_session=True)
    try:
        wait_until(lambda: psutil.Process(process.pid).uids().real != 0, timeout=10, what="setpriv")
        ticks = start_ticks(process.pid)
        assert ticks is not None
        uid = psutil.Process(process.pid).uids().real
        yield PeerIdentity(uid=uid, pid=process.pid, exe=executable_of(process.pid), start_ticks=ticks)
    finally:
        process.kill()
        process.wait()


def _redis(mesh: ConsoleMesh) -> aioredis.Redis:
    password = (mesh.data_dir / "secrets" / "redis_password").read_text().strip()
    port = mesh.env["KRONII_EMBEDDED_REDIS_PORT"]
    return aioredis.Redis.from_url(f"redis://:{password}@127.0.0.1:{port}/0")


@pytest.mark.parametrize(
    ("rule", "refusal"),
    [
        ("YES", None),
        ("NO", "polkit does not allow this user to approve a plan"),
        # No rule: the shipped defaults, auth_self only in an active session; a process in no session
        # at all (as here) is refused outright.
        (None, "polkit does not allow this user to approve a plan"),
    ],
)
def test_the_engines_approval_gate_answers_as_polkits_rule_says_and_the_page_says_how_to_approve(
    polkit_mesh: ConsoleMesh, polkit_bus: tuple[str, Polkitd], rule: str | None, refusal: str | None
) -> None:
    bus, polkitd = polkit_bus
    polkitd.start(None if rule is None else polkit_rule(APPROVE_ACTION, "nobody", rule))
    # Its own loop on its own thread: Playwright's sync API, started by the browser tests of this
    # session, leaves this thread's event loop running, where pytest-asyncio could not run one.
    with ThreadPoolExecutor(max_workers=1) as thread:
        rows = thread.submit(asyncio.run, _ask_the_gate(polkit_mesh, bus, polkitd, refusal)).result()
    (row,) = rows
    assert (row["action"], row["method"], row["outcome"]) == (
        "vision.presence",
        "polkit",
        "ok" if refusal is None else "refused",
    )


async def _ask_the_gate(
    polkit_mesh: ConsoleMesh, bus: str, polkitd: Polkitd, refusal: str | None
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []

    async def record(**row: Any) -> None:
        rows.append(row)

    redis = _redis(polkit_mesh)
    gate = PresenceGate(redis, PolkitClient(bus_address=bus, timeout_s=10), APPROVE_PURPOSE, record=record)
    try:
        with _process_of_nobody() as peer:
            if refusal is None:
                proven = await gate.window(peer, {})
                assert (proven.proof, proven.capabilities) == ("polkit", ("APPROVE",))
            else:
                with pytest.raises(PresenceRefused) as refused:
                    await gate.window(peer, {})
                assert str(refused.value).startswith(refusal), str(refused.value)
                said = approval_refusal("p-1", str(refused.value))
                assert "polkit's dialog" in said and "kronii vision approve p-1 in a terminal" in said
    finally:
        polkitd.start(_yes_for_the_console_user())
        await redis.aclose()
    return rows
