"""The Decisions page's use cases on an in-process pipeline: each run says which roles rules or a
model answered, the fallbacks and the cost, and why it notified or stayed silent; snooze and mute go
to the pipeline with the notification's id and are audited; a silent pipeline is a sentence."""

from __future__ import annotations

import pytest
from kronii.console.adapters.pipeline_api import decision_of
from kronii.console.core.decisions import Control, Decision, RoleRun, why
from kronii.console.usecases.show_decisions import ShowDecisions
from kronii.console.usecases.steer_decisions import SteerDecisions
from kronii.foundation.errors import InvalidArgument, NotFound

from tests.unit.console.console_records_fakes import FakePipeline
from tests.unit.console.test_console_agents_usecases import FakeAudit

PERSON = "person:uid:1000"
RULES = RoleRun("extractor", "rules", "", "ok", "", 0.0, 3)
MODEL = RoleRun("planner", "openai", "qwen2.5-7b", "ok", "", 0.0021, 840)
FELL_BACK = RoleRun("notifier", "rules", "", "ok", "timeout: openai", 0.0, 2)


def _run(run_id: str, at: float, decision: str, notes: tuple[str, ...] = (), nid: str = "") -> Decision:
    roles = (RULES, MODEL, FELL_BACK)
    return Decision(
        run_id, at, "focus: xterm", "terminal", "amber", roles, 0.0021, decision, notes, nid, (), 1200
    )


@pytest.mark.parametrize(
    ("decision", "notes", "said"),
    [
        ("notify", (), "It notified: the planner judged the suggestion worth the interruption."),
        ("silent", (), "It stayed silent: the planner found nothing worth an interruption."),
        (
            "silent",
            ("silent: open_url suggestions snoozed",),
            "It stayed silent (silent: open_url suggestions snoozed).",
        ),
        ("deferred:person_typing", ("deferred: typing",), "It waited (person typing) (deferred: typing)."),
        ("failed", ("failed: TimeoutError",), "It failed (failed: TimeoutError)."),
        ("", (), "It is still running."),
    ],
)
def test_why_a_run_notified_or_stayed_silent_is_one_sentence(
    decision: str, notes: tuple[str, ...], said: str
) -> None:
    assert why(decision, notes, (RULES,)) == said


def test_a_run_from_the_pipelines_json_says_who_answered_each_role_and_the_fallbacks() -> None:
    run = decision_of(
        {
            "run_id": "r1", "created_at": 1_800_000_000.0, "trigger_summary": "focus: xterm", "route": "terminal",
            "redaction_level": "amber", "decision": "notify", "notes": [], "notification_id": "n1",
            "cost_estimate": 0.0021, "duration_ms": 1200, "states": [{"state": "IDLE"}, {"state": "CAPTURING"}],
            "model_calls": [RULES.__dict__ | {"cost_estimate": 0.0}, {"role": "planner", "backend": "openai",
                            "model": "qwen2.5-7b", "outcome": "ok", "fallback": "", "cost_estimate": 0.0021, "latency_ms": 840},
                            {"role": "notifier", "backend": "rules", "fallback": "timeout: openai"}],
        }
    )  # fmt: skip

    assert [role.answered_by for role in run.roles] == ["rules", "model (qwen2.5-7b)", "rules"]
    assert run.fallbacks == ("notifier: timeout: openai",)
    assert run.outcome == "notified" and run.states == ("IDLE", "CAPTURING")
    assert run.cost == pytest.approx(0.0021)


async def test_the_view_pages_the_runs_and_shows_only_controls_in_force() -> None:
    runs = [_run(f"r{i}", 1_800_000_000.0 - i, "silent") for i in range(30)]
    pipeline = FakePipeline(
        runs,
        [
            Control("a", None, True, "n1"),
            Control("b", 1_800_003_600.0, False, "n2"),
            Control("c", None, False, ""),
        ],
    )
    show = ShowDecisions(pipeline)

    first = await show.view()
    second = await show.view(str(first.next_before))

    assert len(first.runs) == 25 and first.next_before == runs[24].created_at
    assert [run.run_id for run in second.runs] == [
        f"r{i}" for i in range(25, 30)
    ] and second.next_before is None
    assert [control.source_key for control in first.controls] == ["a", "b"]


async def test_a_pipeline_that_does_not_answer_is_said_once() -> None:
    view = await ShowDecisions(FakePipeline(answering=False)).view()

    assert view.runs == () and view.problems == (
        "pipeline is not answering: it cannot be reached (is `kronii up` running it?)",
    )


@pytest.mark.parametrize("before", ["yesterday", "-5", "1e30"])
async def test_a_bad_page_mark_is_refused_with_a_sentence(before: str) -> None:
    with pytest.raises(InvalidArgument, match="seconds since 1970"):
        await ShowDecisions(FakePipeline()).view(before)


async def test_snooze_and_mute_reach_the_pipeline_and_are_audited_with_the_person() -> None:
    pipeline, audit = FakePipeline(), FakeAudit()
    steer = SteerDecisions(pipeline, audit)

    snoozed = await steer.snooze(PERSON, "n1", 3600)
    muted = await steer.mute(PERSON, "n1")
    await steer.clear(PERSON, "suggestion:open_url")

    assert snoozed.snoozed_until and muted.muted
    assert pipeline.asked == [("snooze", ("n1", 3600)), ("mute", "n1"), ("clear", "suggestion:open_url")]
    assert [(row["action"], row["outcome"], row["actor"]) for row in audit.rows] == [
        ("console.decisions.snooze", "ok", PERSON),
        ("console.decisions.mute", "ok", PERSON),
        ("console.decisions.unmute", "ok", PERSON),
    ]


async def test_a_snooze_of_an_odd_length_or_a_bad_id_never_reaches_the_pipeline() -> None:
    pipeline = FakePipeline()
    steer = SteerDecisions(pipeline, FakeAudit())

    with pytest.raises(InvalidArgument, match="1 hour, 4 hours or 1 day"):
        await steer.snooze(PERSON, "n1", 999_999)
    with pytest.raises(InvalidArgument):
        await steer.mute(PERSON, "../n1")

    assert pipeline.asked == []


async def test_a_refused_snooze_is_audited_with_its_reason() -> None:
    audit = FakeAudit()

    with pytest.raises(NotFound):
        await SteerDecisions(FakePipeline(), audit).snooze(PERSON, "gone", 3600)

    assert audit.rows[0]["outcome"] == "not_found"
    assert audit.rows[0]["reason"] == "the pipeline no longer knows that notification"
