"""The Control page's use cases against an in-process broker and vision engine: who holds the
desktop and the lease's time left, the person's intents as the broker's words, plans waiting for a
yes apart from those that ended, one service silent while the other is still shown, and every steer
audited with the person as actor."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from kronii.console.core.control import (
    Ambiguity,
    Box,
    DesktopState,
    PlanAction,
    PlanView,
    grant_agents,
    holder_sentence,
)
from kronii.console.ports import ServiceNotAnswering
from kronii.console.usecases.show_control import ShowControl
from kronii.console.usecases.steer_control import SteerControl
from kronii.foundation.errors import FailedPrecondition, InvalidArgument, PermissionDenied

from tests.unit.console.test_console_agents_usecases import FakeAudit

PERSON = "person:uid:1000"
NOW = 1_800_000_000.0
LEASED = DesktopState("s1", "AGENT", holder="vision", lease_expiry=NOW + 42.4, window=0x1A00007,
                      agent_status="RUNNING", epoch=3)  # fmt: skip


class FakeBroker:
    def __init__(self, state: DesktopState | None) -> None:
        self.held = state
        self.intents: list[str] = []
        self.grants: list[tuple[str, str, int]] = []

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

    async def grant(self, agent: str, seconds: int) -> DesktopState:
        self.grants.append(("grant", agent, seconds))
        if agent == "no-presence":
            raise PermissionDenied(
                "the broker said: polkit does not allow this user to give an agent the desktop"
            )
        self.held = DesktopState("s1", "AGENT", holder=agent, lease_expiry=NOW + seconds, epoch=5)
        return self.held

    async def renew(self, agent: str, seconds: int) -> DesktopState:
        self.grants.append(("renew", agent, seconds))
        assert self.held is not None
        self.held = replace(self.held, lease_expiry=NOW + seconds)
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


async def test_grant_lets_the_agent_use_the_desktop_for_the_chosen_minutes_and_is_audited() -> None:
    broker, audit = FakeBroker(DesktopState("s1", "USER")), FakeAudit()
    state = await SteerControl(broker, FakeVision([]), audit).grant(PERSON, "vision", "2")
    assert broker.grants == [("grant", "vision", 120)]
    assert (state.control_mode, state.holder, state.seconds_left(NOW)) == ("AGENT", "vision", 120)
    assert audit.rows == [{"actor": PERSON, "action": "console.control.grant", "subject": "vision",
                           "outcome": "AGENT vision", "seconds": 120}]  # fmt: skip


@pytest.mark.parametrize(
    ("agent", "minutes", "said"),
    [
        ("vision", "0", "1 to 10 whole minutes, not '0'"),
        ("vision", "11", "1 to 10 whole minutes, not '11'"),
        ("vision", "2.5", "1 to 10 whole minutes, not '2.5'"),
        ("vision", "", "1 to 10 whole minutes, not ''"),
        ("../sessions/x", "2", "is not an agent's client id"),
        ("", "2", "is not an agent's client id"),
    ],
)
async def test_a_grant_of_a_bad_agent_or_length_is_refused_before_the_broker_is_asked(
    agent: str, minutes: str, said: str
) -> None:
    broker, audit = FakeBroker(DesktopState("s1", "USER")), FakeAudit()
    with pytest.raises(InvalidArgument, match=re.escape(said)):
        await SteerControl(broker, FakeVision([]), audit).grant(PERSON, agent, minutes)
    assert broker.grants == [] and audit.rows == []


async def test_a_grant_the_broker_refuses_is_audited_as_refused_with_its_sentence() -> None:
    broker, audit = FakeBroker(DesktopState("s1", "USER")), FakeAudit()
    with pytest.raises(PermissionDenied, match="polkit does not allow"):
        await SteerControl(broker, FakeVision([]), audit).grant(PERSON, "no-presence", "1")
    (row,) = audit.rows
    assert (row["action"], row["subject"], row["outcome"]) == (
        "console.control.grant",
        "no-presence",
        "refused",
    )
    assert "polkit does not allow" in row["error"] and broker.held == DesktopState("s1", "USER")


async def test_renew_gives_the_agent_that_holds_the_desktop_more_time() -> None:
    broker, audit = FakeBroker(LEASED), FakeAudit()
    state = await SteerControl(broker, FakeVision([]), audit).renew(PERSON, "vision", "5")
    assert broker.grants == [("renew", "vision", 300)] and state.seconds_left(NOW) == 300
    assert audit.rows == [{"actor": PERSON, "action": "console.control.renew", "subject": "vision",
                           "outcome": "AGENT vision", "seconds": 300, "epoch": 3}]  # fmt: skip


@pytest.mark.parametrize(
    ("held", "said"),
    [(DesktopState("s1", "USER"), "no agent holds it"), (replace(LEASED, holder="coder"), "coder holds it")],
)
async def test_renew_of_an_agent_that_does_not_hold_the_desktop_is_refused_and_audited(
    held: DesktopState, said: str
) -> None:
    broker, audit = FakeBroker(held), FakeAudit()
    with pytest.raises(FailedPrecondition, match=f"vision does not hold the desktop now \\({said}\\)"):
        await SteerControl(broker, FakeVision([]), audit).renew(PERSON, "vision", "2")
    assert broker.grants == [] and [r["outcome"] for r in audit.rows] == ["refused"]


@pytest.mark.parametrize(
    ("held", "offered"),
    [
        (None, ("vision",)),
        (DesktopState("s1", "USER"), ("vision",)),
        (LEASED, ("vision",)),
        (replace(LEASED, holder="coder"), ("vision", "coder")),
    ],
)
def test_the_page_offers_the_desktop_to_the_vision_engine_and_to_the_agent_that_holds_it(
    held: DesktopState | None, offered: tuple[str, ...]
) -> None:
    assert grant_agents(held) == offered
