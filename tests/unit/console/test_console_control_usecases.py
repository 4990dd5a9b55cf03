"""The Control page's use cases against an in-process broker and vision engine: who holds the
desktop and the lease's time left, the person's intents as the broker's words, plans waiting for a
yes apart from those that ended, one service silent while the other is still shown, and every steer
audited with the person as actor."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kronii.console.core.control import Ambiguity, Box, DesktopState, PlanAction, PlanView, holder_sentence
from kronii.console.ports import ServiceNotAnswering
from kronii.console.usecases.show_control import ShowControl
from kronii.console.usecases.steer_control import SteerControl
from kronii.foundation.errors import InvalidArgument, PermissionDenied

from tests.unit.console.test_console_agents_usecases import FakeAudit

PERSON = "person:uid:1000"
NOW = 1_800_000_000.0
LEASED = DesktopState("s1", "AGENT", holder="vision", lease_expiry=NOW + 42.4, window=0x1A00007,
                      agent_status="RUNNING", epoch=3)  # fmt: skip


class FakeBroker:
    def __init__(self, state: DesktopState | None) -> None:
        self.held = state
        self.intents: list[str] = []

    async def state(self) -> DesktopState:
        if self.held is None:
            raise ServiceNotAnswering("broker", "it cannot be reached (is `kronii up` running it?)")
        return self.held

    async def intent(self, intent: str) -> DesktopState:
        assert self.held is not None
        self.intents.append(intent)
        if intent == "WAIT":
            raise ServiceNotAnswering("broker", "only the desktop user may WAIT", status=403)
        self.held = DesktopState("s1", "USER", user_intent=intent, agent_status="STOPPED", epoch=4)
        return self.held


def _plan(plan_id: str, state: str = "awaiting_confirmation") -> PlanView:
    ok = Ambiguity(
        "OK", (("e1", "push button", Box(10, 20, 80, 30)), ("e2", "push button", Box(200, 20, 80, 30)))
    )
    return PlanView(plan_id, "press OK", state, focused_title="Form", safety_rows=("R4",),
                    actions=(PlanAction("press OK", needs_yes=True, why="two buttons are named OK"),),
                    ambiguities=(ok,))  # fmt: skip


class FakeVision:
    def __init__(self, plans: list[PlanView] | None) -> None:
        self.held = plans
        self.decided: list[tuple[str, str]] = []

    async def plans(self) -> list[PlanView]:
        if self.held is None:
            raise ServiceNotAnswering("vision", "it did not answer in time")
        return list(self.held)

    async def plan(self, plan_id: str) -> PlanView:
        return next(p for p in self.held or [] if p.plan_id == plan_id)

    async def approve(self, plan_id: str) -> PlanView:
        if plan_id == "p-locked":
            raise PermissionDenied("the vision engine refused: needs a person at a terminal")
        self.decided.append(("approve", plan_id))
        return replace(_plan(plan_id), state="executing", approved_by=PERSON)

    async def deny(self, plan_id: str) -> PlanView:
        self.decided.append(("deny", plan_id))
        return replace(_plan(plan_id), state="denied")


class Frozen:
    def wall(self) -> float:
        return NOW

    def monotonic(self) -> float:
        return NOW

    def wall_ms(self) -> int:
        return int(NOW * 1000)

    def monotonic_ms(self) -> int:
        return int(NOW * 1000)


@pytest.mark.parametrize(
    ("state", "said"),
    [
        (LEASED, "vision (an agent), 42 s left on its lease, window 0x1a00007"),
        (replace(LEASED, lease_expiry=NOW - 1), "vision (an agent), its lease has lapsed, window 0x1a00007"),
        (
            replace(LEASED, window=0),
            "vision (an agent), 42 s left on its lease, whichever window has the focus",
        ),
        (DesktopState("s1", "USER"), "you (the desktop user)"),
        (
            DesktopState("s1", "USER", user_holds_until=NOW + 9),
            "you; the mesh leaves the desktop alone for 9 s more",
        ),
    ],
)
def test_who_holds_the_desktop_is_said_as_kronii_control_says_it(state: DesktopState, said: str) -> None:
    assert holder_sentence(state, NOW) == said


async def test_the_view_has_the_lease_time_left_and_the_waiting_plans_apart_from_the_ended() -> None:
    vision = FakeVision([_plan("p2"), _plan("p1", "done")])
    view = await ShowControl(FakeBroker(LEASED), vision, Frozen()).view()
    assert view.seconds_left == pytest.approx(42.4)
    assert [p.plan_id for p in view.waiting] == ["p2"] and [p.plan_id for p in view.recent] == ["p1"]
    assert view.waiting[0].boxes == (Box(10, 20, 80, 30), Box(200, 20, 80, 30)), (
        "R4's two OK buttons are drawn"
    )
    assert view.problems == ()


async def test_a_silent_vision_engine_is_a_sentence_and_the_desktop_is_still_shown() -> None:
    view = await ShowControl(FakeBroker(LEASED), FakeVision(None), Frozen()).view()
    assert view.desktop == LEASED and view.waiting == ()
    assert view.problems == ("vision is not answering: it did not answer in time",)


async def test_a_silent_broker_says_the_holder_is_unknown_and_the_plans_are_still_shown() -> None:
    view = await ShowControl(FakeBroker(None), FakeVision([_plan("p1")]), Frozen()).view()
    assert view.desktop is None and view.holder.startswith("unknown")
    assert [p.plan_id for p in view.waiting] == ["p1"] and "broker is not answering" in view.problems[0]


async def test_stop_asks_the_broker_for_stop_now_and_is_audited_with_the_lease_it_ended() -> None:
    broker, audit = FakeBroker(LEASED), FakeAudit()
    state = await SteerControl(broker, FakeVision([]), audit).intent(PERSON, "stop")
    assert broker.intents == ["STOP_NOW"] and state.control_mode == "USER"
    assert audit.rows == [{"actor": PERSON, "action": "console.control.stop", "subject": "s1",
                           "outcome": "USER STOP_NOW STOPPED", "holder": "vision", "epoch": 3}]  # fmt: skip


async def test_interrupt_is_safe_interrupt_and_an_unknown_intent_is_refused() -> None:
    broker, audit = FakeBroker(LEASED), FakeAudit()
    steer = SteerControl(broker, FakeVision([]), audit)
    await steer.intent(PERSON, "interrupt")
    with pytest.raises(InvalidArgument, match="one of wait, interrupt, stop"):
        await steer.intent(PERSON, "STOP_NOW; drop")
    assert broker.intents == ["SAFE_INTERRUPT"]


async def test_wait_refused_by_the_broker_is_audited_as_refused_and_raised() -> None:
    broker, audit = FakeBroker(LEASED), FakeAudit()
    with pytest.raises(ServiceNotAnswering, match="only the desktop user"):
        await SteerControl(broker, FakeVision([]), audit).intent(PERSON, "wait")
    assert audit.rows[0]["action"] == "console.control.wait" and audit.rows[0]["outcome"] == "refused"


async def test_approve_and_deny_reach_the_engine_and_are_audited_with_the_plans_new_state() -> None:
    vision, audit = FakeVision([_plan("p1"), _plan("p2")]), FakeAudit()
    steer = SteerControl(FakeBroker(LEASED), vision, audit)
    assert (await steer.approve(PERSON, "p1")).state == "executing"
    assert (await steer.deny(PERSON, "p2")).state == "denied"
    assert vision.decided == [("approve", "p1"), ("deny", "p2")]
    assert [(r["action"], r["subject"], r["outcome"]) for r in audit.rows] == [
        ("console.control.approve", "p1", "executing"),
        ("console.control.deny", "p2", "denied"),
    ]


async def test_an_approval_the_engine_refuses_is_audited_and_a_bad_plan_id_never_leaves() -> None:
    vision, audit = FakeVision([]), FakeAudit()
    steer = SteerControl(FakeBroker(LEASED), vision, audit)
    with pytest.raises(PermissionDenied, match="person at a terminal"):
        await steer.approve(PERSON, "p-locked")
    with pytest.raises(InvalidArgument):
        await steer.approve(PERSON, "../../v1/run")
    assert [r["outcome"] for r in audit.rows] == ["refused"] and vision.decided == []
