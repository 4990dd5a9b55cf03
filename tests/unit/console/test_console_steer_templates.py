"""The Agents and Control fragments rendered with every kind of thing they show (offline and paused
runtimes, a failed trigger's reason, orphans, a silent service, an R4 plan with its boxes): what a
person must read is there, and text from the services is escaped (a detail or a title carrying markup
stays text)."""

from __future__ import annotations

from typing import Any

from kronii.console.api.pages.agents import error_status, local_time
from kronii.console.api.pages.control import screen_frame
from kronii.console.api.rendering import templates
from kronii.console.core.agents import AgentCard, AgentsView, Runtime, Trigger
from kronii.console.core.control import Ambiguity, Box, DesktopState, PlanAction, PlanView
from kronii.console.ports import ServiceNotAnswering
from kronii.console.usecases.show_control import ControlView
from kronii.foundation.errors import FailedPrecondition, InvalidArgument
from markupsafe import Markup

HOSTILE = '<script>alert("x")</script>'


def _render(name: str, **context: Any) -> str:
    shared = {
        "csrf_field": lambda: Markup('<input type="hidden" name="csrf_token" value="t">'),
        "time": local_time,
    }
    return templates.get_template(name).render({**shared, **context})


def test_the_agents_fragment_shows_states_reasons_orphans_and_escapes_the_supervisors_text() -> None:
    live = Runtime("rt-1", "coder", "ws", "codex", "coder", "idle", "blocked", paused=True)
    gone = Runtime("rt-2", "old", "ws", "python", "old", "offline", "", offline_reason="its process ended")
    failed = Trigger("t-1", "coder", "ws", "failed", runtime_id="rt-1", error_code="ACK_TIMEOUT", detail=HOSTILE,
                     fallback_chain=("tmux", "resume"))  # fmt: skip
    waiting = Trigger("t-2", "coder", "ws", "deferred", error_code="RUNTIME_PAUSED", detail="paused")
    view = AgentsView(
        cards=(AgentCard(live, (failed,)), AgentCard(gone)),
        deferred=(waiting,),
        orphans=(Trigger("t-3", "ghost", "ws", "timeout"),),
    )
    html = _render("agents_live.html", view=view, problem="")
    assert 'data-state="dialog"' in html and ">paused<" in html and "Resume" in html
    assert "offline: its process ended" in html and html.count("Pause") == 0, (
        "an offline runtime has no pause"
    )
    assert HOSTILE not in html and "&lt;script&gt;" in html
    assert "tmux → resume" in html and "ACK_TIMEOUT" in html
    assert 'name="trigger_id" value="t-2"' in html and "Force now" in html
    assert "Triggers of agents no runtime holds now" in html and "t-3" in html


def test_a_silent_supervisor_is_one_sentence_and_no_empty_tables() -> None:
    html = _render(
        "agents_live.html", view=None, problem="supervisor is not answering: it did not answer in time"
    )
    assert "supervisor is not answering" in html and "Deferred queue" not in html


def test_the_control_fragment_shows_the_lease_the_buttons_and_an_r4_plan_with_its_boxes() -> None:
    desktop = DesktopState("s1", "AGENT", holder="vision", lease_expiry=2e9, agent_status="RUNNING")
    ok = Ambiguity(
        "OK", (("e4", "push button", Box(430, 377, 120, 30)), ("e5", "push button", Box(430, 417, 120, 30)))
    )
    plan = PlanView("p_1", "click the OK button", "awaiting_confirmation", focused_title=HOSTILE,
                    safety_rows=("R4",), actions=(PlanAction("click OK [e4]", True, "2 elements are named 'OK'"),),
                    ambiguities=(ok,))  # fmt: skip
    view = ControlView(
        desktop, "vision (an agent), 42 s left on its lease", 42.0, (plan,), (), ("vision is slow",)
    )
    html = _render("control_live.html", view=view, frame=screen_frame)
    assert (
        "vision (an agent), 42 s left on its lease" in html
        and 'data-seconds="42.0"' in html
        and "in 42 s" in html
    )
    assert all(f'value="{intent}"' in html for intent in ("wait", "interrupt", "stop"))
    assert html.count('class="candidate"') == 2 and "OK (e4)" in html and "OK (e5)" in html
    assert 'value="p_1"' in html and "Approve" in html and "Deny" in html
    assert HOSTILE not in html and "vision is slow" in html


def test_the_screen_is_drawn_large_enough_for_every_box() -> None:
    assert screen_frame(()) == (1280, 720)
    assert screen_frame((Box(1900, 1000, 100, 60),)) == (2020, 1080)


def test_a_refusal_keeps_its_kind_and_a_silent_service_is_503() -> None:
    assert error_status(InvalidArgument("bad")) == 400
    assert error_status(FailedPrecondition("not deferred")) == 409
    assert error_status(ServiceNotAnswering("broker", "only the desktop user", status=403)) == 403
    assert error_status(ServiceNotAnswering("broker", "no answer")) == 503
    assert error_status(ServiceNotAnswering("broker", "it broke", status=500)) == 503
