"""A model's answer beyond its schema: the domain's bounds (roles.bounds), the output budget each
role needs, and the rules as the floor (roles.floor): a model adds, it never takes away."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest
from kronii.foundation.settings import SettingsError, load_settings
from kronii.pipeline.core.budget import PluginContent, budget_context
from kronii.pipeline.core.roles import bounds, floor, rules
from kronii.pipeline.core.roles.schemas import check_output
from kronii.pipeline.core.roles.values import ConfidenceLabel, Fragment, Plan, PlanHistory, Role, RoleContext
from kronii.pipeline.core.router import Family
from kronii.pipeline.core.states import TriggerKind
from kronii.pipeline.core.window_context import extract_window_context
from kronii.pipeline.settings import PipelineSettings

NOW = 1_700_000_000_000
CONTEXT = '{"context": "Code - test_parser.py - kronii", "window": {"app": "code"}}'


def ide_context() -> RoleContext:
    budget = budget_context("base", [PluginContent("vscode", "3 open tasks mention main.py", 5)], 1_000)
    return RoleContext(
        TriggerKind.FOCUS_CHANGED,
        budget,
        NOW,
        extract_window_context("code", "main.py - kronii - Visual Studio Code"),
    )


@pytest.mark.parametrize("role", list(Role))
def test_each_roles_budget_fits_its_largest_allowed_answer(role: Role) -> None:
    largest = bounds.largest_answer(role)
    check_output(role, largest)  # the largest answer is one the schema accepts
    # Pretty-printed at one token per three characters: what a small model's tokenizer spends.
    assert math.ceil(len(json.dumps(largest, indent=2)) / 3) <= bounds.output_budget(role)


def test_a_ceiling_below_a_roles_need_is_refused_naming_the_role(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KRONII_PIPELINE_LLM_MAX_OUTPUT_TOKENS", "200")
    with pytest.raises(SettingsError) as refused:
        load_settings(PipelineSettings)
    assert "the notifier" in refused.value.message and "cannot fit" in refused.value.message
    assert "the planner" not in refused.value.message  # 128 tokens fit


def test_extractor_values_copied_from_the_context_pass_invented_ones_do_not() -> None:
    good = {"fragments": [{"kind": "file", "value": "test_parser.py", "confidence": 0.9, "source": "window"}]}
    assert bounds.problems(Role.EXTRACTOR, good, now_ms=NOW, context=CONTEXT) == []
    invented = {
        "fragments": [{"kind": "file", "value": "invoice.pdf", "confidence": 0.9, "source": "window"}]
    }
    assert (
        "words the context does not hold: invoice"
        in bounds.problems(Role.EXTRACTOR, invented, now_ms=NOW, context=CONTEXT)[0]
    )


def test_extractor_nonsense_seen_on_gemma_is_out_of_bounds() -> None:
    # {"kind":"application","value":"application","confidence":0,...} passed the schema before.
    seen = {"fragments": [{"kind": "application", "value": "application", "confidence": 0, "source": "app"}]}
    found = " | ".join(bounds.problems(Role.EXTRACTOR, seen, now_ms=NOW, context="application"))
    assert "repeats its kind" in found and "confidence is 0" in found and "source must be" in found


def test_synthesizer_titles_that_copy_the_action_or_a_field_name_are_out_of_bounds() -> None:
    seen = {
        "candidates": [{"action": "insert", "title": "insert", "rationale": "insert", "confidence": 0.5}],
        "conflicts": [],
        "cost_label": "low",
    }
    found = " | ".join(bounds.problems(Role.SYNTHESIZER, seen, now_ms=NOW))
    assert "title copies another field" in found and "rationale copies the action" in found
    named = {
        "candidates": [{"action": "review", "title": "title", "rationale": "rationale", "confidence": 0.5}],
        "conflicts": [],
        "cost_label": "low",
    }
    assert "is the field name 'title'" in " | ".join(bounds.problems(Role.SYNTHESIZER, named, now_ms=NOW))


def planner_answer(**changes: object) -> dict[str, object]:
    answer: dict[str, object] = {
        "notify": True,
        "next_wakeup_ms": NOW + 600_000,
        "min_cooldown_ms": 600_000,
        "trigger_filters": ["title_changed"],
        "reason": "a new file in the project",
    }
    return {**answer, **changes}


def test_planner_times_within_the_schedulers_limits_pass() -> None:
    assert bounds.problems(Role.PLANNER, planner_answer(), now_ms=NOW) == []


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"min_cooldown_ms": 2_400_000_000_000_000}, "min_cooldown_ms must be 0..3600000"),  # seen on gemma
        ({"next_wakeup_ms": 600_000}, "next_wakeup_ms must be between now"),  # relative, not epoch
        ({"next_wakeup_ms": NOW + 8 * 86_400_000}, "next_wakeup_ms must be between now"),
        ({"trigger_filters": ["lock_start"]}, "may not mute lock_start"),
        ({"trigger_filters": ["tick", "tick"]}, "trigger_filters repeat 'tick'"),
        ({"reason": "reason"}, "is the field name 'reason'"),
    ],
)
def test_planner_out_of_bounds_answers_are_named(changes: dict[str, object], problem: str) -> None:
    assert problem in " | ".join(bounds.problems(Role.PLANNER, planner_answer(**changes), now_ms=NOW))


def test_notifier_body_that_copies_its_title_is_out_of_bounds() -> None:
    action = {"label": "Later", "snooze_ms": 3_600_000}
    answer = {
        "notification": {
            "title": "Review PR 12",
            "body": "Review PR 12",
            "source_summary": "window title",
            "actions": [{"kind": "snooze", **action}, {"kind": "disable", **action}],
        }
    }
    found = " | ".join(bounds.problems(Role.NOTIFIER, answer, now_ms=NOW))
    assert "body copies the title" in found and "action labels repeat 'later'" in found
    assert bounds.problems(Role.NOTIFIER, {"notification": None}, now_ms=NOW) == []


def test_floor_keeps_the_rules_fragments_and_adds_the_models_new_kinds() -> None:
    floor_fragments = rules.extract(ide_context(), Family.EXTRACT)
    model = [Fragment("file", "other.py", 1.0, "window"), Fragment("error", "AssertionError", 0.7, "window")]
    combined = floor.fragments(model, floor_fragments)
    assert combined[: len(floor_fragments)] == floor_fragments
    assert [f.value for f in combined if f.kind == "file"] == ["main.py"]
    assert Fragment("error", "AssertionError", 0.7, "window") in combined


def test_floor_keeps_the_rules_best_candidate_first() -> None:
    floor_synthesis = rules.synthesize(rules.extract(ide_context(), Family.EXTRACT))
    model_candidates = rules.synthesize(
        [Fragment("page", "PR 7", 1.0, "window"), Fragment("repository", "a/b", 1.0, "window"),
         Fragment("reference", "#7", 1.0, "window")]
    )  # fmt: skip
    combined = floor.synthesis(model_candidates, floor_synthesis)
    assert combined.top == floor_synthesis.top
    assert [c.action for c in combined.candidates] == ["related_tasks", "review"]
    assert combined.context_hash == floor_synthesis.context_hash


def test_a_model_cannot_silence_what_the_rules_notify() -> None:
    synthesis = rules.synthesize(rules.extract(ide_context(), Family.EXTRACT))
    history = PlanHistory(NOW)
    rules_plan = rules.plan(synthesis, history)
    assert rules_plan.notify
    silent = Plan(False, NOW + 600_000, 600_000, (), "not now")
    kept, why = floor.plan(silent, rules_plan, synthesis, history, 1_800_000)
    assert kept == rules_plan and why.startswith("overruled: the model stayed silent")


def test_a_model_may_notify_a_medium_candidate_but_not_a_repeat() -> None:
    synthesis = rules.synthesize(rules.extract(ide_context(), Family.EXTRACT))
    top = synthesis.top
    assert top is not None
    medium = replace(
        synthesis, candidates=(replace(top, confidence=0.6, confidence_label=ConfidenceLabel.MEDIUM),)
    )
    history = PlanHistory(NOW)
    rules_plan = rules.plan(medium, history)
    assert not rules_plan.notify
    eager = Plan(True, NOW + 300_000, 300_000, ("title_changed",), "worth it")
    combined, why = floor.plan(eager, rules_plan, medium, history, 1_800_000)
    assert combined.notify and why == ""
    repeated = PlanHistory(NOW, recent_hashes=((medium.context_hash, NOW - 60_000),))
    kept, why = floor.plan(eager, rules.plan(medium, repeated), medium, repeated, 1_800_000)
    assert not kept.notify and "repeat window" in why


def test_a_models_quieter_schedule_is_bounded_by_the_rules() -> None:
    synthesis = rules.synthesize(rules.extract(ide_context(), Family.EXTRACT))
    history = PlanHistory(NOW)
    rules_plan = rules.plan(synthesis, history)
    quiet = Plan(True, NOW + 3_600_000, 3_600_000, ("title_changed", "activity_pulse"), "ok")
    combined, why = floor.plan(quiet, rules_plan, synthesis, history, 1_800_000)
    assert combined.min_cooldown_ms == rules_plan.min_cooldown_ms
    assert combined.next_wakeup_ms == rules_plan.next_wakeup_ms
    assert combined.trigger_filters == ("title_changed",)
    assert why.startswith("bounded:")


def test_a_plan_that_notifies_always_gets_a_notification() -> None:
    synthesis = rules.synthesize(rules.extract(ide_context(), Family.EXTRACT))
    plan = rules.plan(synthesis, PlanHistory(NOW))
    rules_note = rules.notify(plan, synthesis)
    kept, why = floor.notification(None, rules_note, plan)
    assert kept == rules_note and why.startswith("overruled")
    silent = replace(plan, notify=False)
    assert floor.notification(rules_note, None, silent)[0] is None


def test_a_notification_titled_by_the_schema_or_about_nothing_of_the_suggestion_is_out_of_bounds() -> None:
    action = {"label": "Later", "snooze_ms": 3_600_000}
    context = '{"best_candidate": [{"title": "Related tasks for machine.py in kronii"}]}'

    def answer(title: str) -> dict[str, object]:
        return {
            "notification": {
                "title": title,
                "body": "Tasks that mention it may be worth a look.",
                "source_summary": "window title",
                "actions": [{"kind": "snooze", **action}, {"kind": "disable", **{**action, "label": "Stop"}}],
            }
        }

    # Gemma 3 270M wrote the schema's own title as the notification's.
    seen = " | ".join(bounds.problems(Role.NOTIFIER, answer("NotifierOutput"), now_ms=NOW, context=context))
    assert "is the field name 'NotifierOutput'" in seen
    unrelated = bounds.problems(Role.NOTIFIER, answer("Buy groceries today"), now_ms=NOW, context=context)
    assert unrelated == ["title names nothing of the suggestion it announces"]
    assert (
        bounds.problems(Role.NOTIFIER, answer("Open tasks about machine.py"), now_ms=NOW, context=context)
        == []
    )
