"""The scheduling rules of seed 000 ("Scheduling and rate control") with an injected clock: plans set
wake-ups, cooldowns and filters; admission honours filters, the global and per-app ceilings and the
cooldown, which only a justified high-priority trigger preempts."""

from __future__ import annotations

import pytest
from kronii.scheduler.core.model import (
    HOUR_SECS,
    AdmissionView,
    AdmitInput,
    Cooldown,
    InvalidRequest,
    Limits,
    PlanInput,
    Priority,
    TickKind,
)
from kronii.scheduler.core.rules import (
    ADMISSION_RULES,
    apply_plan,
    check_admit_input,
    decide_admission,
    is_justified,
    safety_net_after,
)

NOW = 1_700_000_000.0
LIMITS = Limits(global_runs_per_hour=30, app_runs_per_hour=10, safety_net_interval_secs=300)


def cooling(app: str = "code", secs: float = 120) -> AdmissionView:
    return AdmissionView(cooldown=Cooldown(NOW + secs, app=app, run_id="r1"))


def ask(
    kind: str = "focus_changed",
    app: str = "firefox",
    priority: Priority = Priority.NORMAL,
    justification: str = "",
    dry_run: bool = False,
) -> AdmitInput:
    return check_admit_input(AdmitInput(app, kind, priority, justification, dry_run))


HIGH = Priority.HIGH


# ---- plans ------------------------------------------------------------------------------------


def test_plan_sets_the_apps_wakeup_cooldown_and_filters_until_the_wakeup() -> None:
    plan = PlanInput(
        run_id="r1",
        app="code",
        wakeup_in_secs=600,
        min_cooldown_secs=90,
        trigger_filters=("TitleChanged", "app:slack"),
        reason="review later",
    )
    applied = apply_plan(plan, NOW, LIMITS, "w1")
    assert applied.wakeup is not None
    assert applied.wakeup.slot == "app:code" and applied.wakeup.due_at == NOW + 600
    assert applied.wakeup.kind is TickKind.PLANNED and applied.wakeup.run_id == "r1"
    assert applied.cooldown == Cooldown(NOW + 90, app="code", run_id="r1", reason="review later")
    assert applied.filters == {"title_changed": NOW + 600, "app:slack": NOW + 600}


def test_plan_without_app_uses_the_global_slot_and_absolute_wakeup() -> None:
    applied = apply_plan(PlanInput(wakeup_at=NOW + 30), NOW, LIMITS, "w2")
    assert applied.wakeup is not None and applied.wakeup.slot == "global"
    assert applied.wakeup.due_at == NOW + 30
    assert applied.cooldown is None


def test_plan_filters_without_wakeup_last_until_the_cooldown_ends() -> None:
    applied = apply_plan(
        PlanInput(min_cooldown_secs=45, trigger_filters=("activity_pulse",)), NOW, LIMITS, "w"
    )
    assert applied.wakeup is None
    assert applied.filters == {"activity_pulse": NOW + 45}


def test_a_wakeup_slightly_in_the_past_fires_at_once() -> None:
    applied = apply_plan(PlanInput(wakeup_at=NOW - 5), NOW, LIMITS, "w")
    assert applied.wakeup is not None and applied.wakeup.due_at == NOW


@pytest.mark.parametrize(
    ("plan", "field"),
    [
        (PlanInput(trigger_filters=("title_changed",)), "trigger_filters"),
        (PlanInput(wakeup_in_secs=10, trigger_filters=("window_moved",)), "trigger_filters"),
        (PlanInput(wakeup_in_secs=10, trigger_filters=("app:",)), "trigger_filters"),
        (PlanInput(wakeup_at=NOW + 10, wakeup_in_secs=10), "next_wakeup"),
        (PlanInput(wakeup_at=NOW - 2 * HOUR_SECS), "next_wakeup"),
        (PlanInput(wakeup_at=NOW + 30 * 86400), "next_wakeup"),
        (PlanInput(wakeup_in_secs=30 * 86400), "wakeup_in_ms"),
        (PlanInput(min_cooldown_secs=2 * 86400), "min_cooldown_ms"),
        (PlanInput(app="bad\x00app"), "app"),
        (PlanInput(run_id="r" * 300), "run_id"),
    ],
)
def test_an_invalid_plan_is_refused_naming_the_field(plan: PlanInput, field: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        apply_plan(plan, NOW, LIMITS, "w")
    assert caught.value.field == field


# ---- cooldown and preemption -------------------------------------------------------------------


def test_cooldown_refuses_a_normal_trigger_with_retry_after_the_cooldown() -> None:
    decision = decide_admission(ask(), cooling(secs=120), NOW, LIMITS)
    assert not decision.allowed and decision.reason == "cooldown"
    assert decision.retry_after_secs == pytest.approx(120)
    assert not decision.counts_run


def test_cooldown_over_admits_and_counts_the_run() -> None:
    decision = decide_admission(ask(), cooling(secs=120), NOW + 121, LIMITS)
    assert decision.allowed and decision.reason == "admitted" and decision.counts_run
    assert not decision.preempted_cooldown and not decision.ends_cooldown


@pytest.mark.parametrize(
    ("kind", "app"),
    [("lock_end", ""), ("plugin_event", "zoom"), ("FocusChanged", "firefox")],
)
def test_high_priority_justified_trigger_preempts_the_cooldown(kind: str, app: str) -> None:
    request = ask(kind, app, HIGH, "meeting starts now")
    decision = decide_admission(request, cooling(app="code"), NOW, LIMITS)
    assert decision.allowed and decision.preempted_cooldown
    assert decision.reason == "preempted_cooldown"
    assert decision.ends_cooldown and decision.counts_run


def test_high_priority_without_justification_does_not_preempt() -> None:
    decision = decide_admission(ask("lock_end", "", HIGH, "   "), cooling(), NOW, LIMITS)
    assert not decision.allowed and decision.reason == "cooldown"
    assert "justification" in decision.detail


def test_justified_normal_priority_does_not_preempt() -> None:
    decision = decide_admission(ask("lock_end", "", Priority.NORMAL, "unlocked"), cooling(), NOW, LIMITS)
    assert not decision.allowed and decision.reason == "cooldown"


def test_focus_back_to_the_app_that_set_the_cooldown_does_not_preempt() -> None:
    request = ask("focus_changed", "code", HIGH, "back to the editor")
    assert not is_justified(request, Cooldown(NOW + 60, app="code"))
    decision = decide_admission(request, cooling(app="code"), NOW, LIMITS)
    assert not decision.allowed and "different app" in decision.detail


def test_title_changes_never_preempt_even_high_and_justified() -> None:
    decision = decide_admission(ask("title_changed", "code", HIGH, "new tab"), cooling(), NOW, LIMITS)
    assert not decision.allowed and decision.reason == "cooldown"


def test_dry_run_preemption_neither_counts_nor_ends_the_cooldown() -> None:
    decision = decide_admission(ask("lock_end", "", HIGH, "unlocked", dry_run=True), cooling(), NOW, LIMITS)
    assert decision.allowed and decision.preempted_cooldown
    assert not decision.counts_run and not decision.ends_cooldown


# ---- ceilings ----------------------------------------------------------------------------------


def test_global_ceiling_refuses_the_31st_run_in_an_hour_until_the_oldest_leaves_the_window() -> None:
    runs = [NOW - 3000 + minute * 60 for minute in range(30)]  # 30 runs, the oldest 50 min ago
    decision = decide_admission(ask(), AdmissionView(global_runs=runs), NOW, LIMITS)
    assert not decision.allowed and decision.reason == "global_ceiling"
    assert decision.retry_after_secs == pytest.approx(600)
    assert decide_admission(ask(), AdmissionView(global_runs=runs[1:]), NOW, LIMITS).allowed
    assert decide_admission(ask(), AdmissionView(global_runs=runs), NOW + 601, LIMITS).allowed


def test_global_ceiling_is_not_preempted_by_a_justified_trigger() -> None:
    runs = [NOW - 10.0] * 30
    view = AdmissionView(cooldown=Cooldown(NOW + 60, app="code"), global_runs=runs)
    decision = decide_admission(ask("lock_end", "", HIGH, "unlocked"), view, NOW, LIMITS)
    assert not decision.allowed and decision.reason == "global_ceiling"
    assert not decision.preempted_cooldown


def test_per_app_ceiling_refuses_the_11th_run_of_one_app_and_admits_another_app() -> None:
    app_runs = [NOW - 100.0 + index for index in range(10)]
    refused = decide_admission(
        ask(app="slack"), AdmissionView(global_runs=app_runs, app_runs=app_runs), NOW, LIMITS
    )
    assert not refused.allowed and refused.reason == "app_ceiling"
    assert refused.retry_after_secs == pytest.approx(HOUR_SECS - 100)
    other = decide_admission(ask(app="code"), AdmissionView(global_runs=app_runs, app_runs=[]), NOW, LIMITS)
    assert other.allowed


def test_runs_older_than_an_hour_do_not_count() -> None:
    old = [NOW - HOUR_SECS - 1] * 50
    assert decide_admission(ask(), AdmissionView(global_runs=old, app_runs=old), NOW, LIMITS).allowed


def test_retry_after_covers_every_refusing_rule() -> None:
    view = AdmissionView(cooldown=Cooldown(NOW + 900), app_runs=[NOW - HOUR_SECS + 60] * 10)
    decision = decide_admission(ask(), view, NOW, LIMITS)
    assert decision.reason == "app_ceiling"
    assert decision.retry_after_secs == pytest.approx(900)


# ---- trigger filters ---------------------------------------------------------------------------


def test_trigger_filter_suppresses_its_kind_until_the_wakeup() -> None:
    applied = apply_plan(PlanInput(wakeup_in_secs=300, trigger_filters=("title_changed",)), NOW, LIMITS, "w")
    view = AdmissionView(filters=applied.filters)
    filtered = decide_admission(ask("title_changed", "code"), view, NOW + 10, LIMITS)
    assert not filtered.allowed and filtered.reason == "filtered"
    assert filtered.retry_after_secs == pytest.approx(290)
    assert decide_admission(ask("focus_changed", "code"), view, NOW + 10, LIMITS).allowed
    assert decide_admission(ask("title_changed", "code"), view, NOW + 300, LIMITS).allowed


def test_app_filter_suppresses_every_trigger_of_that_app_even_high_priority() -> None:
    view = AdmissionView(filters={"app:slack": NOW + 60})
    decision = decide_admission(ask("plugin_event", "slack", HIGH, "mention"), view, NOW, LIMITS)
    assert not decision.allowed and decision.reason == "filtered"
    assert decide_admission(ask("plugin_event", "code"), view, NOW, LIMITS).allowed


def test_rules_are_checked_in_the_documented_order() -> None:
    assert [rule.reason for rule in ADMISSION_RULES] == [
        "filtered",
        "global_ceiling",
        "app_ceiling",
        "cooldown",
    ]
    assert [rule.reason for rule in ADMISSION_RULES if rule.preemptable] == ["cooldown"]


# ---- requests and the safety net ---------------------------------------------------------------


def test_admit_input_normalizes_kinds_and_refuses_unknown_ones() -> None:
    assert ask("LockEnd", "").trigger_kind == "lock_end"
    with pytest.raises(InvalidRequest) as caught:
        ask("window_moved")
    assert caught.value.field == "trigger_kind" and "window_moved" in caught.value.reason
    with pytest.raises(InvalidRequest):
        ask("")


def test_safety_net_fires_one_interval_after_the_last_tick() -> None:
    wakeup = safety_net_after(NOW, LIMITS, "s1")
    assert wakeup.slot == "safety_net" and wakeup.kind is TickKind.SAFETY_NET
    assert wakeup.due_at == NOW + 300


@pytest.mark.parametrize("app", ["Gcr-prompter", "gcr-prompter", "Pinentry-gnome3", "Ssh-askpass", "kronii"])
def test_a_plan_about_a_prompt_window_plans_no_app_cooldown_or_wakeup(app: str) -> None:
    plan = PlanInput(run_id="r1", app=app, wakeup_in_secs=60, min_cooldown_secs=1200, reason="focus moved")
    applied = apply_plan(plan, NOW, LIMITS, "w1")
    assert applied.cooldown is None and applied.wakeup is None and not applied.filters
    assert "prompt window, not an app" in applied.ignored


def test_a_plan_about_an_app_still_plans_its_cooldown() -> None:
    applied = apply_plan(PlanInput(run_id="r1", app="XTerm", min_cooldown_secs=1200), NOW, LIMITS, "w1")
    assert applied.cooldown is not None and applied.cooldown.until == NOW + 1200 and not applied.ignored
