"""The Decisions page in process (the pipeline answered in its own JSON shapes): each run with its
trigger, route, redaction level, roles by rules or model, fallbacks, cost and why; Snooze and Mute
post to the pipeline with the CSRF token and are audited; Undo clears a control."""

from __future__ import annotations

from typing import Any

from tests.unit.console.console_records_harness import FakeServices, build_pages, csrf_of

RUN = {
    "run_id": "run-7", "trigger_summary": "focus changed to xterm", "states": [{"state": "IDLE"}, {"state": "NOTIFYING"}],
    "route": "terminal", "plugins_used": [], "redaction_level": "amber",
    "model_calls": [
        {"role": "extractor", "backend": "rules", "model": "", "outcome": "ok", "fallback": "", "cost_estimate": 0.0, "latency_ms": 2},
        {"role": "planner", "backend": "openai", "model": "qwen2.5-7b", "outcome": "ok", "fallback": "", "cost_estimate": 0.0031, "latency_ms": 900},
        {"role": "notifier", "backend": "rules", "model": "", "outcome": "ok", "fallback": "openai timed out", "cost_estimate": 0.0, "latency_ms": 1},
    ],
    "cost_estimate": 0.0031, "decision": "notify", "notes": [], "notification_id": "n-42", "created_at": 1_796_560_000.0,
    "finished_at": 1_796_560_001.2, "duration_ms": 1200,
}  # fmt: skip


def _services() -> FakeServices:
    services = FakeServices()
    controls: list[dict[str, Any]] = [
        {
            "source_key": "suggestion:open_url",
            "snoozed_until": None,
            "disabled": True,
            "notification_id": "n-1",
            "updated_at": 1.0,
        }
    ]
    services.on("pipeline", "GET", "/v1/runs", lambda params, body: {"runs": [RUN], "next_before": None})
    services.on("pipeline", "GET", "/v1/controls", lambda params, body: {"controls": controls})
    services.on(
        "pipeline", "POST", "/v1/notifications/n-42/snooze",
        lambda params, body: {"source_key": "suggestion:x", "snoozed_until": 1_796_572_800.0, "disabled": False, "notification_id": "n-42"},
    )  # fmt: skip
    services.on(
        "pipeline", "POST", "/v1/notifications/n-42/disable",
        lambda params, body: {"source_key": "suggestion:x", "snoozed_until": None, "disabled": True, "notification_id": "n-42"},
    )  # fmt: skip
    services.on(
        "pipeline", "DELETE", "/v1/controls/suggestion%3Aopen_url", lambda params, body: {"cleared": True}
    )
    return services


async def test_a_run_shows_who_answered_each_role_its_cost_and_why_it_notified() -> None:
    pages = await build_pages(_services())
    async with pages.session() as client:
        page = await client.get("/decisions")

    html = page.text
    assert page.status_code == 200
    assert "focus changed to xterm" in html and "terminal" in html and "level-amber" in html
    assert (
        "<strong>extractor</strong>: rules" in html and "<strong>planner</strong>: model (qwen2.5-7b)" in html
    )
    assert "fell back: openai timed out" in html and "0.0031" in html
    assert "It notified: the planner judged the suggestion worth the interruption." in html
    assert "suggestion:open_url" in html and "muted" in html


async def test_snooze_mute_and_undo_reach_the_pipeline_and_are_audited() -> None:
    services = _services()
    pages = await build_pages(services)
    async with pages.session() as client:
        token = csrf_of((await client.get("/decisions")).text)
        snoozed = await client.post(
            "/decisions/snooze", data={"notification_id": "n-42", "seconds": "14400", "csrf_token": token}
        )
        muted = await client.post("/decisions/mute", data={"notification_id": "n-42", "csrf_token": token})
        undone = await client.post(
            "/decisions/unmute", data={"source_key": "suggestion:open_url", "csrf_token": token}
        )
        odd = await client.post(
            "/decisions/snooze", data={"notification_id": "n-42", "seconds": "17", "csrf_token": token}
        )
        forged = await client.post("/decisions/mute", data={"notification_id": "n-42"})

    assert snoozed.status_code == 200 and "Snoozed that kind of suggestion for 4 hours." in snoozed.text
    assert muted.status_code == 200 and "Muted that kind of suggestion" in muted.text
    assert undone.status_code == 200 and "Undone" in undone.text
    assert odd.status_code == 400 and "snooze for 1 hour, 4 hours or 1 day" in odd.text
    assert forged.status_code == 403
    posted = [(call[1], call[2]) for call in services.calls if call[1] != "GET"]
    assert posted == [
        ("POST", "/v1/notifications/n-42/snooze"),
        ("POST", "/v1/notifications/n-42/disable"),
        ("DELETE", "/v1/controls/suggestion%3Aopen_url"),
    ]
    actions = [row["action"] for row in pages.audit if row["action"].startswith("console.decisions")]
    assert actions == ["console.decisions.snooze", "console.decisions.mute", "console.decisions.unmute"]


async def test_a_pipeline_that_does_not_answer_is_a_sentence() -> None:
    services = _services()
    services.down.add("pipeline")
    pages = await build_pages(services)
    async with pages.session() as client:
        page = await client.get("/decisions")

    assert page.status_code == 200 and "pipeline is not answering" in page.text


async def test_the_page_refetches_its_runs_when_the_pipeline_notifies() -> None:
    pages = await build_pages(_services())
    async with pages.session() as client:
        page = await client.get("/decisions")
        fragment = await client.get("/decisions/fragment")

    assert 'data-live="decisions"' in page.text and 'hx-trigger="kronii:decisions"' in page.text
    assert fragment.status_code == 200 and fragment.text.lstrip().startswith('<div id="runs"')
    assert "focus changed to xterm" in fragment.text and "<html" not in fragment.text
