"""Intake: coalescing near-duplicates, the title-churn filter, and the 1,000-title storm."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest
from kronii.pipeline.core.intake import Admission, Batch, Coalescer, Intake, TitleChurn
from kronii.pipeline.core.machine import Facts, Step, step
from kronii.pipeline.core.router import BaseSnapshot, RouterHistory, route
from kronii.pipeline.core.states import PolicyKind, Priority, RunState, Trigger, TriggerKind

K = TriggerKind
T0 = 1_700_000_000_000


def title(at_ms: int, text: str, window_id: int = 7) -> Trigger:
    return Trigger(K.TITLE_CHANGED, at_ms, app="code", wm_class="code", window_id=window_id, title=text)


def test_near_duplicates_within_the_window_coalesce_into_one_batch() -> None:
    coalescer = Coalescer(window_ms=1_500)
    first = Trigger(K.FOCUS_CHANGED, T0, app="code", window_id=1)
    assert coalescer.offer(first) is Admission.OPENED
    assert coalescer.offer(Trigger(K.FOCUS_CHANGED, T0 + 400, app="code", window_id=1)) is Admission.MERGED
    assert coalescer.offer(Trigger(K.FOCUS_CHANGED, T0 + 1_400, app="code", window_id=1)) is Admission.MERGED
    assert coalescer.release(T0 + 1_499) == []
    [batch] = coalescer.release(T0 + 1_500)
    assert batch.count == 3 and batch.first == first and batch.last.at_ms == T0 + 1_400
    assert coalescer.pending == 0


def test_different_kind_or_window_is_not_a_near_duplicate() -> None:
    coalescer = Coalescer()
    coalescer.offer(Trigger(K.FOCUS_CHANGED, T0, app="code", window_id=1))
    assert coalescer.offer(Trigger(K.FOCUS_CHANGED, T0 + 10, app="code", window_id=2)) is Admission.OPENED
    assert coalescer.offer(Trigger(K.ACTIVITY_PULSE, T0 + 20, app="code", window_id=1)) is Admission.OPENED
    assert len(coalescer.release(T0 + 1_520)) == 3


def test_a_trigger_after_the_window_opens_a_new_batch_and_the_old_one_stays_due() -> None:
    coalescer = Coalescer(window_ms=1_000)
    coalescer.offer(Trigger(K.ACTIVITY_PULSE, T0, app="code"))
    assert coalescer.offer(Trigger(K.ACTIVITY_PULSE, T0 + 1_000, app="code")) is Admission.OPENED
    batches = coalescer.release(T0 + 1_001)
    assert [b.opened_at_ms for b in batches] == [T0]
    assert [b.opened_at_ms for b in coalescer.release(T0 + 2_000)] == [T0 + 1_000]


def test_high_priority_batch_is_released_at_once() -> None:
    coalescer = Coalescer()
    coalescer.offer(Trigger(K.FOCUS_CHANGED, T0, app="zoom", priority=Priority.HIGH))
    [batch] = coalescer.release(T0)
    assert batch.high_priority


def test_title_churn_drops_changes_beyond_max_per_window_and_counts_them() -> None:
    churn = TitleChurn(window_ms=1_000, max_changes=3)
    verdicts = [churn.observe(title(T0 + i * 100, f"t{i}")) for i in range(6)]
    assert verdicts == [False, False, False, True, True, True]
    assert churn.dropped == 3
    # A quiet window later, the same window's titles pass again.
    assert churn.observe(title(T0 + 5_000, "calm")) is False


def test_title_churn_is_per_window() -> None:
    churn = TitleChurn(window_ms=1_000, max_changes=1)
    assert churn.observe(title(T0, "a", window_id=1)) is False
    assert churn.observe(title(T0 + 1, "b", window_id=2)) is False
    assert churn.observe(title(T0 + 2, "c", window_id=1)) is True


def test_intake_refuses_triggers_that_belong_to_the_machine() -> None:
    with pytest.raises(ValueError, match="round triggers only"):
        Intake().offer(Trigger(K.LOCK_START, T0))


def _storm(intake: Intake, changes: int, duration_ms: int) -> list[Batch]:
    batches: list[Batch] = []
    for i in range(changes):
        at = T0 + i * duration_ms // changes
        intake.offer(title(at, f"build {i}%"))
        batches.extend(intake.release(at))
    batches.extend(intake.release(T0 + duration_ms + 10_000))
    return batches


def test_storm_of_1000_title_changes_in_10s_yields_one_deferred_batch_and_no_model_call() -> None:
    intake = Intake(window_ms=1_500, title_max_changes=3)
    batches = _storm(intake, changes=1_000, duration_ms=10_000)
    # The bound of the intake docstring: max_changes admitted, coalesced into one batch.
    assert len(batches) == 1
    assert batches[0].count == 3 and batches[0].high_frequency
    assert intake.dropped_title_churn == 997

    base = BaseSnapshot(T0, wm_class="code", title="main.py - kronii - Visual Studio Code")
    model_calls = 0
    for batch in batches:
        decision = route(batch, base, (), RouterHistory(), T0 + 10_000)
        assert decision.kind is PolicyKind.DEFER
        # Walk the machine from Routing: a deferred round never reaches Extracting (the model).
        result = step(RunState.ROUTING, Trigger(K.INTERNAL, T0), Facts(route=decision.kind))
        assert isinstance(result, Step)
        model_calls += result.target in (RunState.EXTRACTING, RunState.AWAITING_CAPTURE, RunState.REDACTING)
        assert result.target is RunState.DEFERRED
    assert model_calls == 0


def test_storm_without_the_churn_filter_is_bounded_by_the_coalescing_window() -> None:
    # Churn filter effectively off: the coalescer alone owns the bound ceil(10 s / 1.5 s) + 1.
    intake = Intake(window_ms=1_500, title_max_changes=10_000)
    batches: Sequence[Batch] = _storm(intake, changes=1_000, duration_ms=10_000)
    assert len(batches) <= math.ceil(10_000 / 1_500) + 1
    assert sum(b.count for b in batches) == 1_000
