"""Every row of the broker's table (seed 004), one case each: the row chosen and what it does."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kronii.broker.core.machine import Happening, Policy, decide
from kronii.broker.core.model import (
    AgentStatus,
    ControlMode,
    ControlState,
    DropReason,
    SafePointAction,
    UserIntent,
)
from kronii.broker.core.table import ROWS, Action, Event, Refusal, cleared_as

NOW = 100_000
WATCHED = ControlState("s", interactive=True, interactive_reason="viewer")
UNWATCHED = ControlState("s")
# The broker cannot see its viewers: nobody can say nobody watches.
UNSEEN = ControlState("s", interactive=True, interactive_reason="unknown")
# An agent "a" holding a live lease the person granted.
HELD = replace(
    WATCHED,
    control_mode=ControlMode.AGENT,
    lease_expiry_ms=NOW + 10_000,
    holder="a",
    epoch=3,
    agent_status=AgentStatus.RUNNING,
    granted_by_user=True,
)
TAKEN = replace(HELD, interactive=False, interactive_reason="", granted_by_user=False)  # by policy (P3)
ENDED = replace(HELD, lease_expiry_ms=NOW - 1)
INTERRUPTING = replace(HELD, user_intent=UserIntent.SAFE_INTERRUPT, agent_status=AgentStatus.STOPPING)
STOPPED = replace(WATCHED, user_intent=UserIntent.STOP_NOW, agent_status=AgentStatus.STOPPED, epoch=4)
PAUSED = replace(WATCHED, agent_status=AgentStatus.PAUSED, epoch=4)

A = "a"
CASES: dict[str, tuple[ControlState, Happening, Policy]] = {
    "G1": (UNWATCHED, Happening(Event.GRANT, agent=A, lease_ms=30_000), Policy()),
    "G2": (STOPPED, Happening(Event.GRANT, agent=A, lease_ms=30_000, window=7), Policy()),
    "E1": (HELD, Happening(Event.EXTEND, lease_ms=60_000), Policy()),
    "E2": (WATCHED, Happening(Event.EXTEND, lease_ms=60_000), Policy()),
    "AG": (HELD, Happening(Event.ACQUIRE, agent=A, lease_ms=300_000), Policy()),
    "A0": (UNSEEN, Happening(Event.ACQUIRE, agent=A, lease_ms=30_000), Policy()),
    "A1": (WATCHED, Happening(Event.ACQUIRE, agent=A, lease_ms=30_000), Policy()),
    "A2": (replace(UNWATCHED, user_intent=UserIntent.STOP_NOW), Happening(Event.ACQUIRE, agent=A), Policy()),
    "A3": (UNWATCHED, Happening(Event.ACQUIRE, agent=A), Policy(allow_headless_acquire=False)),
    "A4": (TAKEN, Happening(Event.ACQUIRE, agent="b", lease_ms=30_000), Policy()),
    "A5": (TAKEN, Happening(Event.ACQUIRE, agent=A, lease_ms=60_000), Policy()),
    "A6": (UNWATCHED, Happening(Event.ACQUIRE, agent=A, lease_ms=30_000), Policy()),
    "R1": (HELD, Happening(Event.RENEW, agent="b", lease_ms=30_000), Policy()),
    "R2": (INTERRUPTING, Happening(Event.RENEW, agent=A, lease_ms=30_000), Policy()),
    "R3": (HELD, Happening(Event.RENEW, agent=A, lease_ms=60_000), Policy()),
    "L1": (HELD, Happening(Event.RELEASE, agent="b"), Policy()),
    "L2": (HELD, Happening(Event.RELEASE, agent=A), Policy()),
    "I1": (HELD, Happening(Event.AGENT_INPUT, agent=A, epoch=2), Policy()),
    "I2": (STOPPED, Happening(Event.AGENT_INPUT, agent=A), Policy()),
    "I3": (PAUSED, Happening(Event.AGENT_INPUT, agent=A), Policy()),
    "I4": (WATCHED, Happening(Event.AGENT_INPUT, agent=A), Policy()),
    "I5": (UNWATCHED, Happening(Event.AGENT_INPUT, agent=A), Policy()),
    "I6": (ENDED, Happening(Event.AGENT_INPUT, agent=A), Policy()),
    "I7": (HELD, Happening(Event.AGENT_INPUT, agent="b"), Policy()),
    "I8": (HELD, Happening(Event.AGENT_INPUT, agent=A, epoch=3), Policy()),
    "S1": (STOPPED, Happening(Event.SAFE_POINT, agent=A), Policy()),
    "S2": (PAUSED, Happening(Event.SAFE_POINT, agent=A), Policy()),
    "S3": (ENDED, Happening(Event.SAFE_POINT, agent=A), Policy()),
    "S4": (HELD, Happening(Event.SAFE_POINT, agent="b"), Policy()),
    "S5": (INTERRUPTING, Happening(Event.SAFE_POINT, agent=A), Policy()),
    "S6": (HELD, Happening(Event.SAFE_POINT, agent=A), Policy()),
    "U1": (HELD, Happening(Event.USER_INPUT), Policy()),
    "U2": (WATCHED, Happening(Event.USER_INPUT), Policy()),
    "B1": (HELD, Happening(Event.UNBROKERED_INPUT), Policy()),
    "B2": (WATCHED, Happening(Event.UNBROKERED_INPUT), Policy()),
    "T1": (HELD, Happening(Event.STOP_NOW), Policy()),
    "N1": (HELD, Happening(Event.SAFE_INTERRUPT), Policy()),
    "N2": (WATCHED, Happening(Event.SAFE_INTERRUPT), Policy()),
    "W1": (INTERRUPTING, Happening(Event.WAIT), Policy()),
    "W2": (STOPPED, Happening(Event.WAIT), Policy()),
    "K1": (ENDED, Happening(Event.TICK), Policy()),
    "K2": (HELD, Happening(Event.TICK), Policy()),
    "V0": (TAKEN, Happening(Event.INTERACTIVE, reason="unknown"), Policy()),
    "V1": (TAKEN, Happening(Event.INTERACTIVE, reason="viewer"), Policy()),
    "V2": (HELD, Happening(Event.INTERACTIVE, reason="viewer"), Policy()),
    "X1": (WATCHED, Happening(Event.NOT_INTERACTIVE), Policy()),
}


def test_every_row_of_the_table_has_a_case() -> None:
    assert sorted(CASES) == sorted(row.id for row in ROWS)


def test_every_event_ends_with_a_row_without_guards() -> None:
    for event in Event:
        assert [row for row in ROWS if row.event is event][-1].guards == (), event


@pytest.mark.parametrize("row_id", sorted(CASES))
def test_the_case_selects_its_row(row_id: str) -> None:
    state, happening, policy = CASES[row_id]
    assert decide(state, happening, NOW, policy).row.id == row_id


def _after(row_id: str) -> ControlState:
    state, happening, policy = CASES[row_id]
    return decide(state, happening, NOW, policy).state


def _revoked(before: ControlState, after: ControlState) -> bool:
    return (
        after.control_mode is ControlMode.USER
        and after.lease_expiry_ms is None
        and after.holder == ""
        and after.epoch == before.epoch + 1
    )


def test_g1_a_grant_in_a_session_nobody_watches_is_refused_and_changes_nothing() -> None:
    state, happening, _ = CASES["G1"]
    decision = decide(state, happening, NOW)
    assert decision.refusal is Refusal.NOT_INTERACTIVE and not decision.changed


def test_g2_a_grant_gives_the_named_agent_the_window_and_clears_a_stop() -> None:
    after = _after("G2")
    assert after.control_mode is ControlMode.AGENT and after.holder == A and after.window == 7
    assert after.lease_expiry_ms == NOW + 30_000 and after.granted_by_user
    assert after.user_intent is UserIntent.WAIT and after.agent_status is AgentStatus.RUNNING
    assert after.epoch == STOPPED.epoch + 1 and after.user_holds_until_ms is None


@pytest.mark.parametrize(
    ("row_id", "refusal"),
    [
        ("A0", Refusal.PRESENCE_UNKNOWN),
        ("A1", Refusal.GRANT_NEEDED),
        ("A2", Refusal.STOPPED_BY_USER),
        ("A3", Refusal.POLICY),
        ("A4", Refusal.HELD),
    ],
)
def test_a0_to_a4_acquisition_refusals_change_nothing(row_id: str, refusal: Refusal) -> None:
    state, happening, policy = CASES[row_id]
    decision = decide(state, happening, NOW, policy)
    assert decision.refusal is refusal and not decision.changed


def test_ag_the_agent_the_person_granted_acquires_while_they_watch_and_the_lease_stays_theirs() -> None:
    state, happening, policy = CASES["AG"]
    decision = decide(state, happening, NOW, policy)
    assert decision.refusal is None and decision.row.outcome == "held"
    # Held as the person granted it: not lengthened (the agent asked for 300 s), no new epoch.
    assert not decision.changed and decision.state.lease_expiry_ms == HELD.lease_expiry_ms
    assert Action.AUDIT in decision.actions


@pytest.mark.parametrize(
    ("state", "row_id"),
    [
        (replace(HELD, interactive_reason="unknown"), "AG"),  # granted: presence unknown does not matter
        (replace(HELD, granted_by_user=False), "A1"),  # a policy lease in a watched session: no
        (replace(HELD, lease_expiry_ms=NOW - 1), "A1"),  # the person's grant ran out
        (replace(HELD, holder="b"), "A1"),  # the person granted another agent
    ],
)
def test_only_a_live_grant_to_the_caller_lets_it_acquire_while_a_person_watches(
    state: ControlState, row_id: str
) -> None:
    assert decide(state, Happening(Event.ACQUIRE, agent=A, lease_ms=30_000), NOW).row.id == row_id


def test_the_persons_input_still_revokes_a_lease_the_agent_acquired_under_their_grant() -> None:
    held = decide(*CASES["AG"][:2], NOW).state
    after = decide(held, Happening(Event.USER_INPUT), NOW + 1).state
    assert after.control_mode is ControlMode.USER and after.agent_status is AgentStatus.STOPPED
    assert decide(after, Happening(Event.SAFE_POINT, agent=A), NOW + 2).answer is SafePointAction.STOP


def test_a5_the_holder_acquiring_again_extends_its_lease_without_a_new_epoch() -> None:
    after = _after("A5")
    assert after.lease_expiry_ms == NOW + 60_000 and after.epoch == TAKEN.epoch


def test_a6_an_agent_takes_a_session_nobody_watches_by_policy() -> None:
    after = _after("A6")
    assert after.control_mode is ControlMode.AGENT and after.holder == A and not after.granted_by_user


def test_r1_r2_renewal_needs_the_lease_and_no_pending_interrupt() -> None:
    assert decide(*CASES["R1"][:2], NOW).refusal is Refusal.NO_LEASE
    assert decide(*CASES["R2"][:2], NOW).refusal is Refusal.OVERRIDE_PENDING


def test_r3_renewal_extends_from_now_capped_by_policy() -> None:
    assert _after("R3").lease_expiry_ms == NOW + 60_000
    capped = decide(HELD, Happening(Event.RENEW, agent=A, lease_ms=10**9), NOW, Policy(max_lease_ms=5_000))
    assert capped.state.lease_expiry_ms == NOW + 5_000


def test_l1_l2_only_the_holder_releases_and_control_returns_to_the_user() -> None:
    assert decide(*CASES["L1"][:2], NOW).refusal is Refusal.NO_LEASE
    assert _revoked(HELD, _after("L2")) and _after("L2").agent_status is AgentStatus.IDLE


@pytest.mark.parametrize(
    ("row_id", "reason"),
    [
        ("I1", DropReason.STALE_EPOCH),
        ("I2", DropReason.STOPPED),
        ("I3", DropReason.PAUSED),
        ("I4", DropReason.USER_CONTROL),
        ("I5", DropReason.NO_LEASE),
        ("I6", DropReason.LEASE_EXPIRED),
        ("I7", DropReason.NOT_HOLDER),
    ],
)
def test_i1_to_i7_agent_input_without_a_valid_grant_is_dropped(row_id: str, reason: DropReason) -> None:
    state, happening, policy = CASES[row_id]
    decision = decide(state, happening, NOW, policy)
    assert decision.drop is reason and Action.INJECT not in decision.actions


def test_i6_input_after_the_lease_ran_out_ends_the_lease() -> None:
    assert _revoked(ENDED, _after("I6"))


def test_i8_the_holders_input_in_its_epoch_is_injected() -> None:
    state, happening, _ = CASES["I8"]
    decision = decide(state, happening, NOW)
    assert decision.actions == (Action.INJECT,) and decision.drop is None and not decision.changed


@pytest.mark.parametrize(
    ("row_id", "answer"),
    [
        ("S1", SafePointAction.STOP),
        ("S2", SafePointAction.PAUSE),
        ("S3", SafePointAction.PAUSE),
        ("S4", SafePointAction.PAUSE),
        ("S5", SafePointAction.PAUSE),
        ("S6", SafePointAction.CONTINUE),
    ],
)
def test_s1_to_s6_safe_point_answers(row_id: str, answer: SafePointAction) -> None:
    state, happening, policy = CASES[row_id]
    assert decide(state, happening, NOW, policy).answer is answer


def test_s5_a_pending_interrupt_pauses_at_the_safe_point_and_returns_control() -> None:
    after = _after("S5")
    assert _revoked(INTERRUPTING, after) and after.agent_status is AgentStatus.PAUSED
    assert after.user_holds_until_ms == NOW + Policy().hold_ms


def test_u1_user_input_revokes_the_lease_and_signals_the_override() -> None:
    state, happening, _ = CASES["U1"]
    decision = decide(state, happening, NOW)
    assert _revoked(HELD, decision.state) and decision.state.agent_status is AgentStatus.STOPPED
    assert decision.signal == "user_input_override"
    assert {Action.CLEAR_QUEUE, Action.SIGNAL_AGENT, Action.AUDIT} <= set(decision.actions)


def test_u2_user_input_while_the_user_holds_control_changes_nothing() -> None:
    assert not decide(*CASES["U2"][:2], NOW).changed


def test_b1_unbrokered_input_revokes_the_lease_like_the_person_but_starts_no_hold() -> None:
    state, happening, _ = CASES["B1"]
    decision = decide(state, happening, NOW)
    assert _revoked(HELD, decision.state) and decision.state.agent_status is AgentStatus.STOPPED
    assert decision.signal == "unbrokered_input" and decision.row.outcome == "overridden_unbrokered"
    assert {Action.CLEAR_QUEUE, Action.SIGNAL_AGENT, Action.AUDIT} <= set(decision.actions)
    assert cleared_as(decision.row) is DropReason.STOPPED
    # Not the person: nobody is known to be at the desk, so the mesh is not told to keep off.
    assert decision.state.user_holds_until_ms is None


def test_b1_unbrokered_input_leaves_a_hold_the_person_started_as_it_was() -> None:
    held = replace(HELD, user_holds_until_ms=NOW + 5)
    assert decide(held, Happening(Event.UNBROKERED_INPUT), NOW).state.user_holds_until_ms == NOW + 5


def test_b2_unbrokered_input_while_no_agent_holds_control_changes_nothing() -> None:
    assert not decide(*CASES["B2"][:2], NOW).changed


def test_t1_stop_now_revokes_clears_and_stops_at_once() -> None:
    state, happening, _ = CASES["T1"]
    decision = decide(state, happening, NOW)
    assert _revoked(HELD, decision.state) and decision.state.user_intent is UserIntent.STOP_NOW
    assert decision.state.agent_status is AgentStatus.STOPPED and Action.CLEAR_QUEUE in decision.actions


def test_n1_n2_safe_interrupt_asks_the_holder_and_is_noted_without_one() -> None:
    assert _after("N1").agent_status is AgentStatus.STOPPING
    assert (
        _after("N1").control_mode is ControlMode.AGENT
    )  # cooperative: the agent keeps it until its safe point
    assert _after("N2").user_intent is UserIntent.SAFE_INTERRUPT


def test_w1_w2_wait_clears_a_pending_interrupt_and_the_hold() -> None:
    assert _after("W1").user_intent is UserIntent.WAIT and _after("W1").agent_status is AgentStatus.RUNNING
    assert _after("W2").user_intent is UserIntent.WAIT


def test_k1_k2_a_tick_ends_only_a_lease_that_ran_out() -> None:
    assert _revoked(ENDED, _after("K1"))
    assert _after("K2") == HELD


def test_v1_a_viewer_attaching_ends_a_lease_taken_by_policy() -> None:
    after = _after("V1")
    assert _revoked(TAKEN, after) and after.interactive and after.interactive_reason == "viewer"


def test_v0_losing_sight_of_the_viewers_ends_a_lease_taken_by_policy() -> None:
    after = _after("V0")
    assert _revoked(TAKEN, after) and after.agent_status is AgentStatus.STOPPED
    assert after.interactive and after.interactive_reason == "unknown"
    assert decide(*CASES["V0"][:2], NOW).signal == "presence_unknown"


@pytest.mark.parametrize("policy", [Policy(), Policy(allow_headless_acquire=False)])
@pytest.mark.parametrize("intent", list(UserIntent))
def test_unknown_presence_refuses_every_acquire_whatever_else_holds(
    policy: Policy, intent: UserIntent
) -> None:
    for agent in (A, "b"):
        state = replace(UNSEEN, user_intent=intent)
        decision = decide(state, Happening(Event.ACQUIRE, agent=agent, lease_ms=30_000), NOW, policy)
        assert decision.refusal is Refusal.PRESENCE_UNKNOWN and not decision.changed


def test_unknown_presence_still_lets_the_person_grant() -> None:
    decision = decide(UNSEEN, Happening(Event.GRANT, agent=A, lease_ms=30_000), NOW)
    assert decision.row.id == "G2" and decision.state.control_mode is ControlMode.AGENT


def test_v2_x1_attachment_changes_only_the_flag_for_a_granted_lease() -> None:
    assert _after("V2").control_mode is ControlMode.AGENT and _after("V2").interactive
    assert not _after("X1").interactive and _after("X1").interactive_reason == ""


# ---- the seed's three unit tests ------------------------------------------------------------------


def test_seed_agent_cannot_preempt_user() -> None:
    decision = decide(WATCHED, Happening(Event.ACQUIRE, agent=A, lease_ms=30_000), NOW)
    assert decision.state.control_mode is ControlMode.USER and decision.refusal is Refusal.GRANT_NEEDED


def test_seed_stop_now_revokes_control_immediately() -> None:
    after = decide(HELD, Happening(Event.STOP_NOW), NOW).state
    assert after.control_mode is ControlMode.USER
    dropped = decide(after, Happening(Event.AGENT_INPUT, agent=A, epoch=HELD.epoch), NOW)
    assert dropped.drop is DropReason.STALE_EPOCH


def test_seed_safe_interrupt_pauses_at_safe_points() -> None:
    asked = decide(HELD, Happening(Event.SAFE_INTERRUPT), NOW).state
    still = decide(asked, Happening(Event.AGENT_INPUT, agent=A), NOW)
    assert still.actions == (Action.INJECT,)  # until the safe point, the agent goes on
    at_point = decide(asked, Happening(Event.SAFE_POINT, agent=A), NOW + 1)
    assert at_point.answer is SafePointAction.PAUSE
    assert (
        at_point.state.control_mode is ControlMode.USER and at_point.state.agent_status is AgentStatus.PAUSED
    )
