"""The pipeline service as a real process: trigger validation, a round through the whole table with
its notification on NATS and SSE, the runs API, snooze/disable, and the plugin registry API."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from kronii.pipeline.v1 import pipeline_pb2 as pb
from kronii.stores import subjects
from kronii.stores.bus import Bus

from tests.infra import InfraUrls
from tests.integration.pipeline.pipeline_support import (
    IDE_TITLE,
    Pipeline,
    SseReader,
    pipeline_database,
    pipeline_env,
    start_pipeline,
)
from tests.mesh import wait_until

FULL_PATH = [
    "idle",
    "collecting",
    "routing",
    "redacting",
    "extracting",
    "synthesizing",
    "planning",
    "acting",
    "cooling",
]


@pytest.fixture(scope="module")
def pipeline(infra: InfraUrls, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pipeline]:
    database = pipeline_database(infra, "service")
    with start_pipeline(pipeline_env(infra, database, tmp_path_factory.mktemp("pipeline"))) as running:
        yield running


def _focus(pipeline: Pipeline, title: str, **extra: object) -> None:
    response = pipeline.trigger(
        kind="focus_changed",
        source="test",
        app_id="code",
        high_priority=True,
        attributes={"wm_class": "Code", "title": title, "window_id": "4242"},
        **extra,
    )
    assert response.status_code == 202, response.text


def test_post_triggers_refuses_bad_requests_with_a_reason(pipeline: Pipeline) -> None:
    unknown = pipeline.trigger(kind="earthquake", source="test")
    assert unknown.status_code == 422 and "kind must be one of" in unknown.json()["detail"]
    anonymous = pipeline.trigger(kind="tick")
    assert anonymous.status_code == 422 and "source is required" in anonymous.json()["detail"]
    bad_window = pipeline.trigger(kind="focus_changed", source="t", attributes={"window_id": "x1"})
    assert bad_window.status_code == 422 and "window_id" in bad_window.json()["detail"]
    plugin = pipeline.trigger(kind="plugin_event", source="t")
    assert plugin.status_code == 422 and "plugin_kind" in plugin.json()["detail"]
    not_proto = pipeline.trigger(kind="tick", source="t", colour="blue")
    assert not_proto.status_code == 400 and "colour" in not_proto.json()["detail"]
    import httpx

    garbage = httpx.post(f"{pipeline.url}/v1/triggers", content=b"{nope", timeout=10)
    assert garbage.status_code == 400 and "not valid JSON" in garbage.json()["detail"]


def test_an_ide_focus_goes_through_every_state_and_notifies_on_nats_and_sse(
    pipeline: Pipeline, infra: InfraUrls
) -> None:
    sse = SseReader(pipeline.url).start()
    seen: list[pb.Notification] = []

    async def listen() -> None:
        bus = Bus("test-notify")
        await bus.connect(infra.nats)

        async def on_note(_subject: str, message: pb.Notification) -> None:
            seen.append(message)

        await bus.subscribe(subjects.NOTIFY, on_note)
        _focus(pipeline, IDE_TITLE)
        for _ in range(200):
            if seen:
                break
            await asyncio.sleep(0.1)
        await bus.close()

    asyncio.run(listen())
    run = pipeline.wait_for_run(lambda r: r["decision"] == "notify")
    assert [visit["state"] for visit in run["states"]] == FULL_PATH
    assert all(visit["left_at_ms"] >= visit["entered_at_ms"] for visit in run["states"][:-1])
    assert [call["role"] for call in run["model_calls"]] == [
        "extractor",
        "synthesizer",
        "planner",
        "notifier",
    ]
    assert run["redaction_level"] == "green" and run["route"].startswith("base_only/extract")
    assert seen and seen[0].title == "Related tasks for machine.py in kronii"
    wait_until(lambda: bool(sse.events), 10, "the notification on the SSE stream")
    assert sse.events[0]["id"] == seen[0].id == run["notification_id"]
    assert {a["key"] for a in sse.events[0]["actions"]} == {"snooze", "disable"}
    assert pipeline.get(f"/v1/runs/{run['run_id']}")["states"] == run["states"]

    # Disable that kind of suggestion: the next IDE file is planned but stays silent.
    disabled = httpx_post(pipeline, f"/v1/notifications/{run['notification_id']}/disable")
    assert disabled["disabled"] is True and disabled["source_key"] == "suggestion:related_tasks"
    _focus(pipeline, "runner.py - kronii - Visual Studio Code")
    silent = pipeline.wait_for_run(
        lambda r: r["decision"] == "silent" and r["created_at"] > run["created_at"]
    )
    assert [v["state"] for v in silent["states"]][-2:] == ["planning", "cooling"]
    snoozed = httpx_post(
        pipeline, f"/v1/notifications/{run['notification_id']}/snooze", {"duration_secs": 60}
    )
    assert float(str(snoozed["snoozed_until"])) > float(str(snoozed["updated_at"]))
    bad = __import__("httpx").post(
        f"{pipeline.url}/v1/notifications/{run['notification_id']}/snooze",
        json={"duration_secs": -1},
        timeout=10,
    )
    assert bad.status_code == 400 and "duration_secs" in bad.json()["detail"]


def httpx_post(pipeline: Pipeline, path: str, body: object | None = None) -> dict[str, object]:
    import httpx

    response = httpx.post(f"{pipeline.url}{path}", json=body, timeout=10)
    assert response.status_code == 200, response.text
    data: dict[str, object] = response.json()
    return data


def test_plugins_register_over_nats_and_are_enabled_and_disabled_over_http(
    pipeline: Pipeline, infra: InfraUrls
) -> None:
    async def announce() -> None:
        bus = Bus("test-plugin")
        await bus.connect(infra.nats)
        registration = pb.PluginRegistration(
            app_id="notes",
            display_name="Notes",
            risk_score=0.2,
            capabilities=pb.PluginCapabilities(summarize=True),
        )
        await bus.publish(subjects.PLUGIN_REGISTER, registration)
        await bus.close()

    asyncio.run(announce())
    wait_until(
        lambda: any(p["app_id"] == "notes" for p in pipeline.get("/v1/plugins")["plugins"]),
        10,
        "the registration",
    )
    assert httpx_post(pipeline, "/v1/plugins/notes/disable")["enabled"] is False
    assert pipeline.get("/v1/plugins/notes")["enabled"] is False
    assert httpx_post(pipeline, "/v1/plugins/notes/enable")["enabled"] is True
    import httpx

    assert httpx.post(f"{pipeline.url}/v1/plugins/nope/enable", timeout=10).status_code == 404


def test_readyz_says_the_core_limits_apply_when_no_scheduler_answers(pipeline: Pipeline) -> None:
    ready = pipeline.get("/readyz")
    scheduler = ready["dependencies"]["scheduler"]
    assert scheduler["required"] is False
    assert "own rate limits" in scheduler["detail"]


def test_runs_api_pages_and_refuses_bad_limits(pipeline: Pipeline, tmp_path: Path) -> None:
    import httpx

    assert httpx.get(f"{pipeline.url}/v1/runs?limit=0", timeout=10).status_code == 400
    assert httpx.get(f"{pipeline.url}/v1/runs/nope", timeout=10).status_code == 404
    assert isinstance(pipeline.get("/v1/runs?limit=1")["runs"], list)
