"""The vision engine end to end on the real things: a vision engine process reading a real GTK3 window's
accessibility tree under Xvfb, planning with the rules backend, and acting through a real input broker
with the engine signed in by its Ed25519 key. The form prints every click, so what ran is what the
window saw, not what the engine says.

One desktop, broker and engine serve the module (they take most of the time); each test gets a form of
its own. The STOP_NOW test comes last: a stopped agent stays stopped until the person grants again."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from tests.infra import InfraUrls
from tests.integration.vision.conftest import FORM_SECRET
from tests.integration.vision.vision_desktop import A11yDesktop, GtkForm, start_a11y_desktop, start_gtk_form
from tests.integration.vision.vision_service_support import (
    NotificationDesk,
    VisionEngine,
    clicked,
    start_vision,
)
from tests.mesh import wait_until


@pytest.fixture(scope="module")
def shared_desktop() -> Iterator[A11yDesktop]:
    with start_a11y_desktop() as desktop:
        yield desktop


@pytest.fixture(scope="module")
def notifications(shared_desktop: A11yDesktop) -> Iterator[NotificationDesk]:
    with NotificationDesk(shared_desktop.bus_address) as desk:
        yield desk


@pytest.fixture(scope="module")
def shared_vision(
    infra: InfraUrls,
    migrated_database: str,
    shared_desktop: A11yDesktop,
    notifications: NotificationDesk,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[VisionEngine]:
    with start_vision(infra, migrated_database, shared_desktop, tmp_path_factory.mktemp("vision")) as engine:
        yield engine


@pytest.fixture
def gtk_form(shared_desktop: A11yDesktop) -> Iterator[GtkForm]:
    with start_gtk_form(shared_desktop, FORM_SECRET) as form:
        yield form


@pytest.fixture
def vision(shared_vision: VisionEngine, gtk_form: GtkForm) -> Iterator[VisionEngine]:
    """The shared engine once it sees this test's form; plans left waiting are denied afterwards."""
    deadline = time.monotonic() + 10
    while "Cancel" not in httpx.get(f"{shared_vision.url}/v1/vision/context", timeout=30).text:
        assert time.monotonic() < deadline, "the engine never saw the form"
        time.sleep(0.1)
    yield shared_vision
    for plan in httpx.get(f"{shared_vision.url}/v1/vision/plans", timeout=10).json()["plans"]:
        if plan["state"] in ("awaiting_confirmation", "ready"):
            httpx.post(f"{shared_vision.url}/v1/vision/plans/{plan['plan_id']}/deny", timeout=10)


def test_click_the_cancel_button_runs_through_the_broker_and_the_buttons_handler_fires(
    vision: VisionEngine, gtk_form: GtkForm
) -> None:
    plan = vision.plan("click the Cancel button")
    assert plan["requires_confirmation"] is False, plan
    done = vision.wait_for(plan["plan_id"])
    assert done["state"] == "done", done
    gtk_form.expect(lambda line: line.startswith("CLICKED Cancel"))
    assert not clicked(gtk_form.seen, "OK")
    how = done["results"][0]["how"]
    assert "its accessibility action 'click'" in how and how.endswith("seen: the application changed"), how
    # The lease was the broker's: vision acquired it and gave it back.
    journal = [entry for entry in vision.broker.journal() if entry.get("actor") == "agent:vision"]
    assert any(entry.get("event") == "acquire" for entry in journal), journal
    assert vision.broker.state()["control_mode"] != "AGENT"
    actions = [row["action"] for row in vision.audit_actions() if row["subject"] == plan["plan_id"]]
    assert actions[:1] == ["vision.plan"] and "vision.action" in actions and "vision.plan.done" in actions


# The same on real applications in the conformance suite (tests/integration/vision/conformance/).
@pytest.mark.slow
def test_r4_two_buttons_named_ok_force_confirmation_and_are_named_in_the_dialog(
    vision: VisionEngine, gtk_form: GtkForm
) -> None:
    plan = vision.plan("click the OK button")
    assert plan["state"] == "awaiting_confirmation"
    assert "R4" in plan["safety_rows"]
    (ambiguity,) = plan["ambiguities"]
    assert ambiguity["name"] == "OK" and len(ambiguity["candidates"]) == 2
    run = httpx.post(f"{vision.url}/v1/vision/plans/{plan['plan_id']}/run", timeout=10)
    assert run.status_code == 409 and "approval" in run.json()["detail"]
    time.sleep(0.5)
    assert not clicked(gtk_form.seen, "OK")


def test_the_persons_approval_from_a_terminal_runs_the_flagged_plan(
    vision: VisionEngine, gtk_form: GtkForm
) -> None:
    plan = vision.plan("click the OK button")
    run = vision.kronii("vision", "approve", plan["plan_id"])
    assert run.code == 0, run.shown
    gtk_form.expect(lambda line: line.startswith("CLICKED OK"))
    assert vision.get(plan["plan_id"])["approved_by"].startswith("person:uid:")


def test_an_agent_cannot_approve_a_plan_over_tcp(vision: VisionEngine, gtk_form: GtkForm) -> None:
    plan = vision.plan("click the OK button")
    refused = httpx.post(f"{vision.url}/v1/vision/plans/{plan['plan_id']}/approve", timeout=10)
    assert refused.status_code == 403
    assert "kronii vision approve" in refused.json()["detail"]
    assert vision.get(plan["plan_id"])["state"] == "awaiting_confirmation"


def test_an_approval_is_refused_after_the_window_changed_and_the_intent_is_planned_again(
    vision: VisionEngine, gtk_form: GtkForm
) -> None:
    plan = vision.plan("click the OK button")
    gtk_form.send("relabel Cancel Abort")
    deadline = time.monotonic() + 5
    while "Abort" not in httpx.get(f"{vision.url}/v1/vision/context", timeout=30).text:
        assert time.monotonic() < deadline, "the relabelled button never showed in the tree"
        time.sleep(0.1)
    run = vision.kronii("vision", "approve", plan["plan_id"])
    assert run.code == 4, run.shown
    assert "approval refused" in run.shown and "changed" in run.shown
    stale = vision.get(plan["plan_id"])
    assert stale["state"] == "stale" and stale["replanned_as"]
    assert vision.get(stale["replanned_as"])["state"] == "awaiting_confirmation"
    time.sleep(0.5)
    assert not clicked(gtk_form.seen, "OK")


# The same on real applications in the conformance suite (tests/integration/vision/conformance/).
@pytest.mark.slow
def test_a_password_fields_text_never_appears_in_a_context_or_a_plan(
    vision: VisionEngine, gtk_form: GtkForm
) -> None:
    seen = httpx.get(f"{vision.url}/v1/vision/context", timeout=30)
    assert seen.status_code == 200
    assert any(node.get("secured") for node in seen.json()["tree"])
    plan = vision.plan("type hello into Password", execute=False)
    assert plan["state"] == "blocked" and "S1" in plan["blocked"]
    everything = seen.text + str(plan) + vision.proc.output
    assert FORM_SECRET not in everything


# The same on real applications in the conformance suite (tests/integration/vision/conformance/).
@pytest.mark.slow
def test_typing_into_a_named_field_uses_the_fields_editable_text(
    vision: VisionEngine, gtk_form: GtkForm
) -> None:
    plan = vision.plan("type hello into Name")
    assert vision.wait_for(plan["plan_id"])["state"] == "done"
    gtk_form.expect(lambda line: line == "NAME hello")


def test_the_confirmation_notification_shows_the_ambiguity_and_its_approve_button_runs_the_plan(
    vision: VisionEngine, gtk_form: GtkForm, notifications: NotificationDesk
) -> None:
    plan = vision.plan("click the OK button")
    server = notifications.server
    assert server is not None
    deadline = time.monotonic() + 5
    while not any(plan["plan_id"] in shown["body"] for shown in server.received):
        assert time.monotonic() < deadline, "no notification for the plan"
        time.sleep(0.05)
    server_id, shown = next((i + 1, n) for i, n in enumerate(server.received) if plan["plan_id"] in n["body"])
    assert "Ambiguous" in shown["body"] and "“OK” matches 2 elements" in shown["body"]
    assert shown["actions"] == ["approve", "Approve", "deny", "Deny"]
    notifications.click(server_id, "approve")
    gtk_form.expect(lambda line: line.startswith("CLICKED OK"))
    assert vision.wait_for(plan["plan_id"])["approved_by"] == "person:notification"


def test_kronii_vision_do_from_a_terminal_prints_what_ran_and_exits_0(
    vision: VisionEngine, gtk_form: GtkForm
) -> None:
    run = vision.kronii("vision", "do", "click the Cancel button")
    assert run.code == 0, run.shown
    assert "done" in run.shown and "click Cancel" in run.shown and "ran:" in run.shown
    gtk_form.expect(lambda line: line.startswith("CLICKED Cancel"))


def test_kronii_vision_do_shows_the_ambiguity_and_runs_with_the_persons_yes(
    vision: VisionEngine, gtk_form: GtkForm
) -> None:
    run = vision.kronii("vision", "do", "click the OK button", "--yes")
    assert run.code == 0, run.shown
    assert "ambiguous" in run.shown and "needs your yes" in run.shown
    gtk_form.expect(lambda line: line.startswith("CLICKED OK"))


def test_kronii_vision_do_of_something_the_rules_cannot_plan_says_what_they_can(vision: VisionEngine) -> None:
    run = vision.kronii("vision", "do", "make the window prettier")
    assert run.code == 4, run.shown
    assert "without a model" in run.shown and "click the NAME button" in run.shown


def test_the_metrics_count_plans_their_ends_the_safety_rows_and_the_context_parts(
    vision: VisionEngine, gtk_form: GtkForm
) -> None:
    def value(name: str) -> float:
        text = httpx.get(f"{vision.url}/metrics", timeout=10).text
        return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(name))

    done_before = value('kronii_vision_plan_ends_total{state="done"}')
    r4_before = value('kronii_vision_safety_rows_total{row="R4"}')
    plan = vision.plan("click the Cancel button")
    vision.wait_for(plan["plan_id"])
    vision.plan("click the OK button", execute=False)
    assert value('kronii_vision_plan_ends_total{state="done"}') == done_before + 1
    assert value('kronii_vision_safety_rows_total{row="R4"}') == r4_before + 1
    assert value('kronii_vision_context_seconds_count{part="tree"}') >= 2
    assert value('kronii_vision_actions_total{outcome="done",type="click_by_bounds"}') >= 1


def test_concurrent_looks_at_the_screen_all_answer_and_the_engine_stays_up(vision: VisionEngine) -> None:
    # One X connection shared by threads without a lock once left a reply half read: every later request hung.
    from concurrent.futures import ThreadPoolExecutor

    def look(_: int) -> int:
        return httpx.get(f"{vision.url}/v1/vision/context", timeout=30).status_code

    for _round in range(3):
        with ThreadPoolExecutor(6) as pool:
            assert list(pool.map(look, range(6))) == [200] * 6
    assert httpx.get(f"{vision.url}/healthz", timeout=5).status_code == 200


def test_the_persons_own_key_press_during_a_plan_takes_the_desktop_back_and_nothing_runs_after_it(
    vision: VisionEngine, gtk_form: GtkForm, shared_desktop: A11yDesktop
) -> None:
    from tests.person_hands import PersonHands

    plan = vision.plan("wait 2 s then click the Cancel button")
    vision.wait_for(plan["plan_id"], frozenset({"executing"}), timeout_s=10)
    time.sleep(0.3)  # the lease is taken before the wait starts
    # The person's own device (xdotool would be automation around the broker, not the person).
    with PersonHands(shared_desktop.display) as hands:
        hands.key("shift")
    stopped = vision.wait_for(plan["plan_id"])
    assert stopped["state"] == "stopped", stopped
    assert "took the desktop back" in stopped["reason"], stopped["reason"]
    time.sleep(1.0)
    assert not clicked(gtk_form.seen, "Cancel")


def _safe_points(vision: VisionEngine) -> int:
    return sum(1 for row in vision.broker.journal() if row["event"] == "safe_point")


def test_stop_now_during_a_plan_means_no_action_after_it(vision: VisionEngine, gtk_form: GtkForm) -> None:
    earlier = _safe_points(vision)  # the engine and its broker are the module's: earlier plans left rows
    plan = vision.plan("wait 2 s then click the Cancel button")
    vision.wait_for(plan["plan_id"], frozenset({"executing"}), timeout_s=10)
    # The person stops the agent during its 2 s wait: once the broker has answered the wait's safe point,
    # not before the engine took the desktop or reached that point.
    wait_until(lambda: _safe_points(vision) > earlier, 10, "the wait's safe point")
    vision.broker.intent("STOP_NOW")
    stopped = vision.wait_for(plan["plan_id"])
    assert stopped["state"] == "stopped", stopped
    assert "STOP" in stopped["reason"] or "took the desktop" in stopped["reason"]
    time.sleep(1.0)
    assert not clicked(gtk_form.seen, "Cancel")
    assert len(stopped["results"]) == 1  # the wait ran; the click never did
