"""The console's pipeline adapter and the Decisions page against the REAL pipeline service as a
process (real NATS, Redis, PostgreSQL): a real run that notified shows with its roles (rules here,
no model configured), its path, its redaction level and why; Snooze, Mute and Undo from the page
reach the real pipeline (its controls say so) and are audited by the console."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
import pytest_asyncio
from kronii.console.adapters.pipeline_api import PipelineApi
from kronii.console.adapters.service_clients import HttpServiceClients
from kronii.console.usecases.show_decisions import ShowDecisions

from tests.infra import InfraUrls
from tests.integration.pipeline.pipeline_support import (
    IDE_TITLE,
    Pipeline,
    pipeline_database,
    pipeline_env,
    start_pipeline,
)
from tests.unit.console.console_records_harness import build_pages, csrf_of


@pytest.fixture(scope="module")
def pipeline(infra: InfraUrls, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pipeline]:
    database = pipeline_database(infra, "console")
    with start_pipeline(pipeline_env(infra, database, tmp_path_factory.mktemp("pipeline"))) as running:
        yield running


@pytest.fixture(scope="module")
def notified(pipeline: Pipeline) -> dict[str, object]:
    answer = httpx.post(
        f"{pipeline.url}/v1/triggers",
        json={"kind": "focus_changed", "source": "test", "app_id": "code", "high_priority": True,
              "attributes": {"wm_class": "Code", "title": IDE_TITLE, "window_id": "4242"}},
        timeout=10,
    )  # fmt: skip
    assert answer.status_code == 202, answer.text
    return pipeline.wait_for_run(lambda run: run["decision"] == "notify")


@pytest_asyncio.fixture
async def clients(pipeline: Pipeline) -> AsyncIterator[HttpServiceClients]:
    services = HttpServiceClients({"pipeline": pipeline.url}, api_token=None, timeout_secs=10)
    try:
        yield services
    finally:
        await services.close()


async def test_a_real_run_shows_who_answered_each_role_and_why_it_notified(
    clients: HttpServiceClients, notified: dict[str, object]
) -> None:
    view = await ShowDecisions(PipelineApi(clients)).view()

    run = next(run for run in view.runs if run.run_id == notified["run_id"])
    assert run.outcome == "notified" and run.notification_id == notified["notification_id"]
    assert [role.role for role in run.roles] == ["extractor", "synthesizer", "planner", "notifier"]
    assert all(role.answered_by == "rules" for role in run.roles)
    assert run.redaction_level == "green" and run.route.startswith("base_only/extract")
    assert run.states[0] == "idle" and run.states[-1] == "cooling"
    assert run.why.startswith("It notified")
    assert view.problems == ()


async def test_snooze_mute_and_undo_from_the_page_reach_the_real_pipeline(
    clients: HttpServiceClients, notified: dict[str, object], pipeline: Pipeline
) -> None:
    pages = await build_pages(clients)
    notification = str(notified["notification_id"])
    async with pages.session() as client:
        page = await client.get("/decisions")
        token = csrf_of(page.text)
        snoozed = await client.post(
            "/decisions/snooze",
            data={"notification_id": notification, "seconds": "3600", "csrf_token": token},
        )
        after_snooze = pipeline.get("/v1/controls")["controls"]
        muted = await client.post(
            "/decisions/mute", data={"notification_id": notification, "csrf_token": token}
        )
        after_mute = pipeline.get("/v1/controls")["controls"]
        undone = await client.post(
            "/decisions/unmute", data={"source_key": after_mute[0]["source_key"], "csrf_token": token}
        )

    assert (
        page.status_code == 200
        and "It notified" in page.text
        and "<strong>planner</strong>: rules" in page.text
    )
    assert snoozed.status_code == 200 and after_snooze[0]["snoozed_until"]
    assert muted.status_code == 200 and after_mute[0]["disabled"] is True
    assert undone.status_code == 200 and pipeline.get("/v1/controls")["controls"] == []
    actions = [row["action"] for row in pages.audit if row["action"].startswith("console.decisions")]
    assert actions == ["console.decisions.snooze", "console.decisions.mute", "console.decisions.unmute"]
