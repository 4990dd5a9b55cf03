"""The deterministic `rules` roles, the backend protocol, and the role output schemas."""

from __future__ import annotations

from dataclasses import replace

import jsonschema  # type: ignore[import-untyped,unused-ignore]
import pytest
from kronii.pipeline.core.budget import PluginContent, budget_context
from kronii.pipeline.core.roles import codec, rules
from kronii.pipeline.core.roles.schemas import ROLE_SCHEMAS, RoleOutputError, check_output, output_problems
from kronii.pipeline.core.roles.values import (
    ConfidenceLabel,
    Fragment,
    NotificationActionKind,
    PlanHistory,
    Role,
    RoleContext,
)
from kronii.pipeline.core.router import Family
from kronii.pipeline.core.states import CapturePreemption, TriggerKind
from kronii.pipeline.core.window_context import extract_window_context
from kronii.pipeline.ports import RoleBackend

T0 = 1_700_000_000_000
VSCODE_TITLE = "main.py - kronii - Visual Studio Code"


def ide_context(title: str = VSCODE_TITLE, trigger: TriggerKind = TriggerKind.FOCUS_CHANGED) -> RoleContext:
    budget = budget_context("base", [PluginContent("vscode", "3 open tasks mention main.py", 5)], 1_000)
    return RoleContext(trigger, budget, T0, extract_window_context("code", title))


def test_extract_pulls_artifact_details_and_plugin_summaries() -> None:
    fragments = rules.extract(ide_context(), Family.EXTRACT)
    kinds = {(f.kind, f.value, f.source) for f in fragments}
    assert ("file", "main.py", "window") in kinds
    assert ("project", "kronii", "window") in kinds
    assert ("plugin_summary", "3 open tasks mention main.py", "plugin:vscode") in kinds


def test_observe_gives_the_activity_and_reads_no_plugin_content() -> None:
    fragments = rules.extract(ide_context(), Family.OBSERVE)
    assert fragments[0] == Fragment("activity", "ide:vscode", 1.0, "window")
    assert not any(f.kind == "plugin_summary" for f in fragments)


def test_ide_file_with_project_gives_high_confidence_related_tasks() -> None:
    synthesis = rules.synthesize(rules.extract(ide_context(), Family.EXTRACT))
    top = synthesis.top
    assert top is not None and top.action == "related_tasks"
    assert top.confidence_label is ConfidenceLabel.HIGH and top.key == "related_tasks:main.py@kronii"
    assert "plugin:vscode" in top.sources


def test_ide_file_without_project_gives_low_confidence() -> None:
    context = RoleContext(
        TriggerKind.FOCUS_CHANGED,
        budget_context("b", [], 100),
        T0,
        extract_window_context("kitty", "nvim main.py"),
    )
    top = rules.synthesize(rules.extract(context, Family.EXTRACT)).top
    assert top is not None and top.confidence_label is ConfidenceLabel.LOW


def test_lock_end_puts_resume_first() -> None:
    synthesis = rules.synthesize(rules.extract(ide_context(trigger=TriggerKind.LOCK_END), Family.EXTRACT))
    assert [c.action for c in synthesis.candidates] == ["resume", "related_tasks"]


def test_a_page_with_a_repository_and_a_reference_suggests_a_review() -> None:
    fragments = [
        Fragment("page", "Pull request #12", 0.9, "window"),
        Fragment("repository", "org/repo", 0.9, "window"),
        Fragment("reference", "#12", 0.9, "window"),
    ]
    top = rules.synthesize(fragments).top
    assert top is not None and (top.action, top.key, top.confidence) == ("review", "review:org/repo#12", 0.85)
    assert (top.title, top.rationale) == ("Review #12 in org/repo", "#12 of org/repo is open in the browser.")
    assert top.sources == ("window",)


def test_any_other_page_suggests_low_confidence_related_tasks() -> None:
    fragments = [Fragment("page", "Docs", 0.9, "window"), Fragment("repository", "org/repo", 0.9, "window")]
    top = rules.synthesize(fragments).top
    assert top is not None and (top.action, top.key, top.confidence) == (
        "related_tasks",
        "related_tasks:Docs",
        0.4,
    )
    assert (top.title, top.rationale) == ("Related to Docs", "The browser shows Docs.")
    assert top.sources == ("window",)  # the repository alone made no review


def test_a_meeting_suggests_notes_crediting_the_plugin_summaries() -> None:
    fragments = [
        Fragment("meeting", "Weekly sync", 0.8, "window"),
        Fragment("plugin_summary", "5 attendees", 0.6, "plugin:zoom"),
    ]
    top = rules.synthesize(fragments).top
    assert top is not None and (top.action, top.key, top.confidence) == (
        "meeting_notes",
        "meeting_notes:Weekly sync",
        0.8,
    )
    assert top.title == "Notes for Weekly sync" and top.sources == ("plugin:zoom", "window")


def test_every_fact_gives_its_candidate_resume_first() -> None:
    fragments = [
        Fragment(kind, value, 0.9, "window")
        for kind, value in (("meeting", "Standup"), ("page", "Docs"), ("file", "a.py"), ("resume", "a.py"))
    ]
    synthesis = rules.synthesize(fragments)
    assert [c.key for c in synthesis.candidates] == [
        "resume:a.py",
        "meeting_notes:Standup",
        "related_tasks:a.py",
        "related_tasks:Docs",
    ]


def test_conflicts_resolve_by_confidence_and_the_hash_ignores_order() -> None:
    fragments = [
        Fragment("project", "kronii", 0.9, "window"),
        Fragment("project", "old-name", 0.6, "plugin:vscode"),
        Fragment("file", "main.py", 0.9, "window"),
    ]
    synthesis = rules.synthesize(fragments)
    assert ("project", "kronii") in {(f.kind, f.value) for f in synthesis.fragments}
    assert synthesis.conflicts == ("project: kept 'kronii' (window) over 'old-name'",)
    assert rules.synthesize(list(reversed(fragments))).context_hash == synthesis.context_hash
    changed = rules.synthesize([*fragments[:2], Fragment("file", "util.py", 0.9, "window")])
    assert changed.context_hash != synthesis.context_hash


def test_planner_notifies_the_first_time_today_then_stays_silent() -> None:
    synthesis = rules.synthesize(rules.extract(ide_context(), Family.EXTRACT))
    history = PlanHistory(T0)
    first = rules.plan(synthesis, history)
    assert first.notify and first.min_cooldown_ms == rules.RulesParams().notify_cooldown_ms
    assert first.next_wakeup_ms == T0 + first.min_cooldown_ms

    # Same context hash within the repeat window: silent, with the longer cooldown.
    after = replace(history.after(synthesis, first, horizon_ms=3_600_000), now_ms=T0 + 60_000)
    repeat = rules.plan(synthesis, after)
    assert not repeat.notify and repeat.reason == "same context within the repeat window"
    assert repeat.min_cooldown_ms > first.min_cooldown_ms

    # Later the same day, past the repeat window: still silent, it was surfaced today.
    later = replace(after, now_ms=T0 + 2 * 3_600_000, recent_hashes=())
    assert rules.plan(synthesis, later).reason == "already suggested today"


def test_planner_is_silent_on_low_confidence_or_nothing() -> None:
    assert rules.plan(rules.synthesize([]), PlanHistory(T0)).reason == "nothing to suggest"
    low = rules.synthesize([Fragment("file", "main.py", 0.9, "window")])
    plan = rules.plan(low, PlanHistory(T0))
    assert not plan.notify and "low confidence" in plan.reason


def test_meeting_plan_downgrades_a_pending_capture_others_cancel_it() -> None:
    meeting = rules.synthesize([Fragment("meeting", "Weekly sync", 0.8, "window")])
    assert rules.plan(meeting, PlanHistory(T0)).capture_preemption is CapturePreemption.DOWNGRADE
    ide = rules.synthesize(rules.extract(ide_context(), Family.EXTRACT))
    assert rules.plan(ide, PlanHistory(T0)).capture_preemption is CapturePreemption.CANCEL


def test_notifier_gives_source_summary_and_snooze_disable_or_nothing() -> None:
    synthesis = rules.synthesize(rules.extract(ide_context(), Family.EXTRACT))
    notification = rules.notify(rules.plan(synthesis, PlanHistory(T0)), synthesis)
    assert notification is not None
    assert notification.title == "Related tasks for main.py in kronii"
    assert "window title" in notification.source_summary and "plugin vscode" in notification.source_summary
    assert {a.kind for a in notification.actions} == {
        NotificationActionKind.SNOOZE,
        NotificationActionKind.DISABLE,
    }
    silent = rules.plan(rules.synthesize([]), PlanHistory(T0))
    assert rules.notify(silent, synthesis) is None


async def test_rules_backend_implements_the_protocol_and_records_calls() -> None:
    backend: RoleBackend = rules.RulesBackend()
    fragments = await backend.extract(ide_context(), Family.EXTRACT)
    synthesis = await backend.synthesize(fragments.value)
    plan = await backend.plan(synthesis.value, PlanHistory(T0))
    notification = await backend.notify(plan.value, synthesis.value)
    assert notification.value is not None
    calls = [fragments.call, synthesis.call, plan.call, notification.call]
    assert [c.role for c in calls] == [Role.EXTRACTOR, Role.SYNTHESIZER, Role.PLANNER, Role.NOTIFIER]
    assert all(c.backend == "rules" and c.input_tokens > 0 and c.latency_ms == 0 for c in calls)


# ---- schemas ----------------------------------------------------------------------------------


@pytest.mark.parametrize("role", list(Role))
def test_schemas_are_valid_draft_2020_12(role: Role) -> None:
    jsonschema.Draft202012Validator.check_schema(ROLE_SCHEMAS[role])


@pytest.mark.parametrize("trigger", [TriggerKind.FOCUS_CHANGED, TriggerKind.LOCK_END])
def test_rules_output_validates_against_the_schemas_and_round_trips(trigger: TriggerKind) -> None:
    fragments = rules.extract(ide_context(trigger=trigger), Family.EXTRACT)
    synthesis = rules.synthesize(fragments)
    plan = rules.plan(synthesis, PlanHistory(T0))
    notification = rules.notify(plan, synthesis)
    documents = {
        Role.EXTRACTOR: codec.fragments_to_json(fragments),
        Role.SYNTHESIZER: codec.synthesis_to_json(synthesis),
        Role.PLANNER: codec.plan_to_json(plan),
        Role.NOTIFIER: codec.notification_to_json(notification),
    }
    for role, document in documents.items():
        assert output_problems(role, document) == [], role
    assert codec.fragments_from_json(documents[Role.EXTRACTOR]) == fragments
    assert codec.synthesis_from_json(documents[Role.SYNTHESIZER], fragments) == synthesis
    assert codec.plan_from_json(documents[Role.PLANNER]) == plan
    assert codec.notification_from_json(documents[Role.NOTIFIER]) == notification
    check_output(Role.NOTIFIER, codec.notification_to_json(None))


def test_invalid_model_output_names_the_field() -> None:
    with pytest.raises(RoleOutputError) as raised:
        codec.fragments_from_json(
            {"fragments": [{"kind": "file", "value": "a.py", "confidence": 2, "source": "w"}]}
        )
    assert raised.value.problems[0].startswith("$.fragments[0].confidence")
    problems = output_problems(Role.PLANNER, {"notify": "yes"})
    assert any("'yes' is not of type 'boolean'" in p for p in problems)
    assert any("'next_wakeup_ms' is a required property" in p for p in problems)


def test_notification_without_snooze_and_disable_is_invalid() -> None:
    document = {"notification": {"title": "t", "body": "b", "source_summary": "s", "actions": []}}
    assert output_problems(Role.NOTIFIER, document)


def test_model_synthesis_hash_is_recomputed_not_trusted() -> None:
    fragments = [Fragment("file", "main.py", 0.9, "window")]
    document = {
        "candidates": [{"action": "related_tasks", "title": "T", "rationale": "R", "confidence": 0.9}],
        "conflicts": [],
        "cost_label": "low",
        "context_hash": "0" * 64,
    }
    synthesis = codec.synthesis_from_json(document, fragments)
    assert synthesis.context_hash == rules.context_hash(fragments) != "0" * 64
    assert synthesis.candidates[0].confidence_label is ConfidenceLabel.HIGH
