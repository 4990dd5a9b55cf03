"""The Agents page in a real browser against a real `kronii up` on Xvfb: a `python3 -i` agent started
with `kronii agents spawn` is shown with its live state; a prompt triggered from the page runs in its
pane and the supervisor's true outcome shows, on top and on the agent's card, and the pane (read-only,
redacted) shows what it printed; paused from the page, the next trigger waits in the deferred queue
and Force now from the page delivers it; each of these leaves the console's audit row with the
person as actor. Screenshots go to the test's tmp dir, to look at."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.console.conftest import ConsoleMesh, screenshot
from tests.mesh import wait_until

pytestmark = pytest.mark.e2e

WORKSPACE = "console"


def _spawn_python_agent(mesh: ConsoleMesh) -> tuple[str, str]:
    agent = f"repl-{uuid.uuid4().hex[:6]}"
    done = mesh.kronii(
        "agents", "spawn", "--workspace", WORKSPACE, "--agent", agent, "--kind", "python", "--json",
        "--", sys.executable, "-i", "-q",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    runtime_id = str(json.loads(done.stdout)["runtime"]["runtime_id"])

    def ready() -> bool:
        logs = mesh.kronii("agents", "logs", runtime_id, "--json")
        return logs.returncode == 0 and any(
            line.startswith(">>>") for line in json.loads(logs.stdout)["lines"]
        )

    wait_until(ready, timeout=20, what="the REPL's prompt")
    return agent, runtime_id


def _audited(mesh: ConsoleMesh, action: str) -> list[tuple[str, str, str]]:
    """The audit log's rows of `action` (actor, subject, outcome), as `kronii audit tail` shows them."""
    done = mesh.kronii("audit", "tail", "-n", "300", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return [
        (str(r.get("actor")), str(r.get("subject")), str(r.get("outcome")))
        for r in rows
        if r["action"] == action
    ]


def test_a_prompt_triggered_from_the_agents_page_runs_and_its_true_outcome_shows(
    console_mesh: ConsoleMesh, console_page: Page, tmp_path: Path
) -> None:
    agent, runtime_id = _spawn_python_agent(console_mesh)
    page = console_page
    page.goto(f"{console_mesh.console_url}/agents")
    card = page.locator(f"#runtime-{runtime_id}")
    expect(card.locator(".agent-name")).to_have_text(agent)
    expect(card.locator(".badge").first).to_have_text("idle", timeout=15_000)

    page.select_option("#trigger-agent", f"{agent}@{WORKSPACE}")
    page.fill("#trigger-prompt", "print(6 * 7)")
    page.get_by_role("button", name="Trigger", exact=True).click()
    said = page.locator(".said.ok")
    expect(said).to_contain_text("delivered", timeout=30_000)
    trigger_id = said.locator("strong").first.inner_text().split(":")[0].removeprefix("Trigger ").strip()
    assert trigger_id.startswith("console-"), trigger_id
    expect(page.locator(f'#runtime-{runtime_id} [data-trigger="{trigger_id}"] .result')).to_have_text(
        "delivered", timeout=15_000
    )
    page.locator(f"#runtime-{runtime_id}").get_by_role("link", name="Pane").click()
    expect(page.locator("pre.pane")).to_contain_text("42")
    screenshot(page, tmp_path, "agents-delivered")

    logs = json.loads(console_mesh.kronii("agents", "logs", runtime_id, "--json").stdout)["lines"]
    assert "42" in [line.strip() for line in logs], logs
    wait_until(
        lambda: bool(_audited(console_mesh, "console.agents.trigger")), timeout=15, what="the audit row"
    )
    rows = _audited(console_mesh, "console.agents.trigger")
    assert (f"{WORKSPACE}/{agent}", "delivered") in [(s, o) for _, s, o in rows], rows
    assert all(actor.startswith("person") for actor, _, _ in rows), rows


def test_paused_from_the_page_a_trigger_waits_in_the_queue_and_force_now_delivers_it(
    console_mesh: ConsoleMesh, console_page: Page, tmp_path: Path
) -> None:
    agent, runtime_id = _spawn_python_agent(console_mesh)
    page = console_page
    page.goto(f"{console_mesh.console_url}/agents")
    card = page.locator(f"#runtime-{runtime_id}")
    card.get_by_role("button", name=f"Pause {agent}").click()
    expect(page.locator(".said.ok")).to_contain_text("is paused")
    expect(page.locator(f"#runtime-{runtime_id} .badge.paused")).to_be_visible()

    page.select_option("#trigger-agent", f"{agent}@{WORKSPACE}")
    page.fill("#trigger-prompt", "print('held ' * 2)")
    page.get_by_role("button", name="Trigger", exact=True).click()
    expect(page.locator(".said.ok")).to_contain_text("deferred", timeout=30_000)
    expect(page.locator(".said.ok")).to_contain_text("RUNTIME_PAUSED")
    queued = page.locator("#deferred-heading + table tbody tr", has_text=agent)
    expect(queued).to_have_count(1)
    screenshot(page, tmp_path, "agents-deferred")

    queued.get_by_label("Why force").fill("the person wants it now")
    queued.get_by_role("button", name="Force now").click()
    expect(page.locator(".said.ok")).to_contain_text("delivered", timeout=30_000)
    expect(page.locator("#deferred-heading + table tbody tr", has_text=agent)).to_have_count(0)
    screenshot(page, tmp_path, "agents-forced")
    wait_until(
        lambda: "held held" in console_mesh.kronii("agents", "logs", runtime_id).stdout,
        timeout=10,
        what="the forced prompt's output in the pane",
    )
    wait_until(lambda: bool(_audited(console_mesh, "console.agents.force")), timeout=15, what="the audit row")
    forced = _audited(console_mesh, "console.agents.force")
    assert forced and forced[-1][2] == "delivered", forced
    page.locator(f"#runtime-{runtime_id}").get_by_role("button", name=f"Resume {agent}").click()
    expect(page.locator(".said.ok")).to_contain_text("is running")


def test_a_bad_trigger_or_one_without_the_csrf_token_is_refused_with_a_sentence_and_nothing_runs(
    console_mesh: ConsoleMesh, console_page: Page
) -> None:
    agent, runtime_id = _spawn_python_agent(console_mesh)
    page = console_page
    page.goto(f"{console_mesh.console_url}/agents")
    token = page.locator('input[name="csrf_token"]').first.get_attribute("value") or ""
    url = f"{console_mesh.console_url}/agents/trigger"
    empty = page.request.post(
        url, form={"agent": f"{agent}@{WORKSPACE}", "prompt": "  ", "csrf_token": token}
    )
    assert empty.status == 400 and "type a prompt for the agent" in empty.text(), empty.text()[:500]
    bad_agent = page.request.post(url, form={"agent": "../x@ws", "prompt": "print(1)", "csrf_token": token})
    assert bad_agent.status == 400 and "agent must be" in bad_agent.text()
    no_token = page.request.post(url, form={"agent": f"{agent}@{WORKSPACE}", "prompt": "print('sneaked')"})
    assert no_token.status == 403, no_token.status
    unknown = page.request.post(
        f"{console_mesh.console_url}/agents/force",
        form={"trigger_id": "no-such-trigger", "csrf_token": token},
    )
    assert unknown.status == 404 and "no trigger" in unknown.text()
    logs = console_mesh.kronii("agents", "logs", runtime_id).stdout
    assert "sneaked" not in logs and "print(1)" not in logs, logs


def test_the_agents_page_reads_at_200_percent_zoom_in_the_dark(
    console_mesh: ConsoleMesh, console_page: Page, tmp_path: Path
) -> None:
    _spawn_python_agent(console_mesh)
    page = console_page
    page.emulate_media(color_scheme="dark")
    page.set_viewport_size({"width": 640, "height": 900})  # a 1280 px window at 200 %
    page.goto(f"{console_mesh.console_url}/agents")
    expect(page.locator(".agent-card").first).to_be_visible()
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 1, f"the page scrolls sideways by {overflow} px at 200 %"
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(20, 22, 25)", background
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    screenshot(page, tmp_path, "agents-dark-200")
    page.goto(f"{console_mesh.console_url}/control")
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 1, f"Control scrolls sideways by {overflow} px at 200 %"
    screenshot(page, tmp_path, "control-dark-200")


def test_a_trigger_from_elsewhere_shows_on_the_open_page_without_a_reload(
    console_mesh: ConsoleMesh, console_page: Page, tmp_path: Path
) -> None:
    agent, runtime_id = _spawn_python_agent(console_mesh)
    page = console_page
    page.goto(f"{console_mesh.console_url}/agents")
    expect(page.locator(f"#runtime-{runtime_id}")).to_be_visible()
    page.evaluate("window.__kronii_not_reloaded = true")
    trigger_id = f"cli-{uuid.uuid4().hex[:8]}"
    done = console_mesh.kronii(
        "agents",
        "trigger",
        "--workspace",
        WORKSPACE,
        "--agent",
        agent,
        "--trigger-id",
        trigger_id,
        "print(5)",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    expect(page.locator(f'#runtime-{runtime_id} [data-trigger="{trigger_id}"] .result')).to_have_text(
        "delivered", timeout=12_000
    )
    assert page.evaluate("window.__kronii_not_reloaded === true"), "the page was reloaded"
    screenshot(page, tmp_path, "agents-live")
