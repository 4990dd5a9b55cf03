"""A plan's life (core/plans.py), R6 at execution (core/revalidation.py) and what an approval is bound to
(core/fingerprint.py)."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest
from kronii.foundation.errors import FailedPrecondition
from kronii.vision.core.actions import Action, ActionType
from kronii.vision.core.context import Bounds, RawNode, ScreenContext, UiNode
from kronii.vision.core.fingerprint import (
    SCREEN_CHANGE_THRESHOLD,
    plan_fingerprint,
    screen_change,
    tree_signature,
)
from kronii.vision.core.plan_book import PlanBook, PlanRecord
from kronii.vision.core.plans import TERMINAL, TRANSITIONS, PlanEvent, PlanState, next_state, refusal
from kronii.vision.core.revalidation import current_node
from kronii.vision.core.revalidation import refusal as r6_refusal
from kronii.vision.core.safety import SafetyEvaluation

_S, _E = PlanState, PlanEvent
EXPECTED = {
    (_S.AWAITING_CONFIRMATION, _E.APPROVE): _S.READY,
    (_S.AWAITING_CONFIRMATION, _E.DENY): _S.DENIED,
    (_S.AWAITING_CONFIRMATION, _E.SCREEN_CHANGED): _S.STALE,
    (_S.AWAITING_CONFIRMATION, _E.EXPIRE): _S.EXPIRED,
    (_S.READY, _E.START): _S.EXECUTING,
    (_S.READY, _E.DENY): _S.DENIED,
    (_S.READY, _E.SCREEN_CHANGED): _S.STALE,
    (_S.READY, _E.EXPIRE): _S.EXPIRED,
    (_S.EXECUTING, _E.FINISH): _S.DONE,
    (_S.EXECUTING, _E.FAIL): _S.FAILED,
    (_S.EXECUTING, _E.STOP): _S.STOPPED,
    (_S.EXECUTING, _E.SCREEN_CHANGED): _S.STALE,
}
REFUSED = [pair for pair in itertools.product(PlanState, PlanEvent) if pair not in EXPECTED]


@pytest.mark.parametrize(("state", "event"), list(EXPECTED), ids=lambda v: str(v))
def test_every_transition_of_the_table_leads_where_it_says(state: PlanState, event: PlanEvent) -> None:
    assert next_state(state, event) is EXPECTED[state, event]
    book, record = book_with(state)
    book.move(record, event, 5, "why")
    assert record.state is EXPECTED[state, event]
    assert record.history[-1] == {"at_ms": 5, "state": EXPECTED[state, event].value, "reason": "why"}


def test_the_table_holds_exactly_the_expected_transitions() -> None:
    assert TRANSITIONS == EXPECTED


@pytest.mark.parametrize(("state", "event"), REFUSED, ids=lambda v: str(v))
def test_anything_else_is_refused_with_the_tables_sentence(state: PlanState, event: PlanEvent) -> None:
    assert next_state(state, event) is None
    book, record = book_with(state)
    with pytest.raises(FailedPrecondition) as refused:
        book.move(record, event, 5)
    assert refused.value.message == f"plan {record.id}: {refusal(state, event)}"
    assert record.state is state and len(record.history) == 1


def test_terminal_states_have_no_way_out() -> None:
    assert all(state not in TERMINAL for state, _ in TRANSITIONS)
    assert set(PlanState) - {_S.AWAITING_CONFIRMATION, _S.READY, _S.EXECUTING} == TERMINAL


@pytest.mark.parametrize(
    ("state", "event", "sentence"),
    [
        (_S.AWAITING_CONFIRMATION, _E.START, "the plan needs a person's approval before it runs"),
        (_S.DENIED, _E.APPROVE, "a plan that is denied cannot be approved"),
        (_S.DONE, _E.START, "a plan that is done cannot be started"),
        (_S.EXECUTING, _E.DENY, "a plan that is executing cannot be denied"),
        (_S.AWAITING_CONFIRMATION, _E.FINISH, "a plan that is awaiting confirmation cannot be finished"),
        (_S.STALE, _E.SCREEN_CHANGED, "a plan that is stale cannot be marked stale"),
    ],
)
def test_the_refusal_sentences_read_as_a_person_would_say_them(
    state: PlanState, event: PlanEvent, sentence: str
) -> None:
    assert refusal(state, event) == sentence


def test_a_plan_waiting_past_its_time_to_live_expires() -> None:
    book, waiting = book_with(_S.AWAITING_CONFIRMATION)
    assert book.expire(waiting.created_ms + 1_000) == []
    assert book.expire(waiting.created_ms + 1_001) == [waiting]
    assert waiting.state is _S.EXPIRED and waiting.reason == "nobody approved it in time"


# --- R6: what the executor refuses at the moment of running ------------------------------------------


def ui(node_id: str, ref: str, role: str, name: str) -> UiNode:
    return UiNode(node_id, ref, role, name, frozenset(), Bounds(0, 0, 10, 10), ("click",), False, "", 1)


def raw_of(node: UiNode, *, name: str | None = None, ref: str | None = None) -> RawNode:
    return RawNode(
        ref=ref or node.ref, role=node.role, name=node.name if name is None else name, states=node.states,
        bounds=node.bounds, actions=node.actions, editable=node.editable, text="", depth=node.depth, parent=None,
    )  # fmt: skip


TREE = (ui("e1", "a|/1", "frame", "Form"), ui("e2", "a|/2", "push button", "Save"))


def screen(tree: tuple[UiNode, ...] = TREE, shot_hash: str = "aa" * 32) -> ScreenContext:
    return ScreenContext(
        screenshot_id="s", screenshot_hash=shot_hash, screenshot_size=(800, 600),
        capture_area=Bounds(0, 0, 800, 600), ocr=(), tree=tree, focused_title="Form",
        screen_bounds=Bounds(0, 0, 1920, 1080), scale=1.0, taken_at_ms=0,
    )  # fmt: skip


SAVE = Action(ActionType.CLICK_BY_BOUNDS, target="Save", ui_element_id="e2")
FRESH = tuple(raw_of(n) for n in TREE)


def test_r6_an_action_still_marked_for_confirmation_is_refused_until_confirmed() -> None:
    flagged = replace(SAVE, require_confirmation=True)
    assert r6_refusal(flagged, screen(), FRESH, confirmed=False) == (
        "R6: 'click Save [e2]' still needs a person's confirmation"
    )
    assert r6_refusal(flagged, screen(), FRESH, confirmed=True) == ""


def test_r6_an_element_id_the_approved_screen_never_had_is_refused() -> None:
    ghost = replace(SAVE, ui_element_id="e9")
    assert r6_refusal(ghost, screen(), FRESH, confirmed=True) == "R6: element e9 is unknown"


@pytest.mark.parametrize(
    "fresh",
    [FRESH[:1], (FRESH[0], raw_of(TREE[1], name="Delete")), (FRESH[0], raw_of(TREE[1], ref="a|/99"))],
    ids=["gone", "renamed", "another-object"],
)
def test_r6_an_element_no_longer_on_the_fresh_screen_is_refused(fresh: tuple[RawNode, ...]) -> None:
    assert current_node(SAVE, screen(), fresh) is None
    assert r6_refusal(SAVE, screen(), fresh, confirmed=False) == (
        "R6: element e2 (push button 'Save') is no longer on the screen"
    )


def test_r6_an_element_still_there_is_found_by_its_object_not_its_position() -> None:
    reordered = (raw_of(TREE[1]), FRESH[0])
    assert current_node(SAVE, screen(), reordered) is reordered[0]
    assert r6_refusal(SAVE, screen(), reordered, confirmed=False) == ""
    assert r6_refusal(Action(ActionType.WAIT, delay_ms=1), screen(), (), confirmed=False) == ""


# --- the fingerprint an approval binds to ------------------------------------------------------------


def test_the_fingerprint_changes_with_the_tree_the_screenshot_and_the_elements_named() -> None:
    base = plan_fingerprint(screen(), [SAVE])
    assert plan_fingerprint(screen(), [SAVE]) == base
    renamed = (TREE[0], replace(TREE[1], name="Save as"))
    moved = (TREE[0], replace(TREE[1], bounds=Bounds(5, 0, 10, 10)))
    assert plan_fingerprint(screen(renamed), [SAVE]) != base
    assert plan_fingerprint(screen(moved), [SAVE]) != base
    assert plan_fingerprint(screen(shot_hash="bb" * 32), [SAVE]) != base
    assert plan_fingerprint(screen(), [replace(SAVE, ui_element_id="e1")]) != base
    assert plan_fingerprint(screen(), [SAVE, SAVE]) == base  # the same elements, counted once


def test_the_tree_signature_sees_a_field_becoming_secured() -> None:
    secured = (TREE[0], replace(TREE[1], secured=True))
    assert tree_signature(secured) != tree_signature(TREE)


def test_screen_change_says_why_the_screen_is_not_the_approved_one() -> None:
    renamed = screen((TREE[0], replace(TREE[1], name="Discard")))
    assert screen_change(screen(), renamed, 0.0) == "the window's elements changed since the plan was made"
    assert screen_change(screen(), screen(), SCREEN_CHANGE_THRESHOLD) == (
        "the screen changed since the plan was made (pixel difference 0.010)"
    )
    assert screen_change(screen(), screen(), 0.0099) == ""
    assert screen_change(screen(), screen(shot_hash=""), 0.0) == ""  # the fresh look takes no screenshot


# --- helpers -----------------------------------------------------------------------------------------


def book_with(state: PlanState) -> tuple[PlanBook, PlanRecord]:
    book = PlanBook(ttl_ms=1_000)
    record = PlanRecord(
        id=book.new_id(), intent="click Save", requester="person:uid:1000", created_ms=1_000, backend="rules",
        context=screen(), frame=np.zeros((4, 4), dtype=np.uint8),
        evaluation=SafetyEvaluation((SAVE,), (), "", "", (), ()), fingerprint="f", state=state,
    )  # fmt: skip
    book.add(record)
    return book, record
