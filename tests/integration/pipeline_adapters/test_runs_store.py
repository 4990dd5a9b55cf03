"""The runs store and GET /v1/runs, /v1/runs/{id}: the path through the states with timings,
plugins, redaction level, model calls and cost, decision and next schedule."""

from __future__ import annotations

import uuid

import httpx
from fastapi import FastAPI
from kronii.edge.api_edge import install_error_handler
from kronii.edge.limits import install_limits
from kronii.llm.protocol import CallRecord
from kronii.pipeline.adapters.runs_store import RunStore
from kronii.pipeline.api.runs import runs_router
from kronii.pipeline.core.runs import RunRecord, StateVisit
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.integration.pipeline_adapters.operations import operations_over


def run(created_at: float, decision: str = "notify", **extra: object) -> RunRecord:
    return RunRecord(run_id=f"run-{uuid.uuid4().hex[:10]}", created_at=created_at, decision=decision, **extra)  # type: ignore[arg-type]


async def test_a_run_is_stored_whole_and_updated_as_it_progresses(engine: AsyncEngine) -> None:
    store = RunStore(engine)
    started = run(
        1_000.0,
        decision="",
        trigger_summary="FocusChanged to Code",
        states=(StateVisit("Collecting", 1_000_000),),
    )
    await store.save(started)
    calls = (
        CallRecord("extractor", "openai", "m", 120, 30, 400, 1, 0.002),
        CallRecord("planner", "openai", "m", 80, 20, 300, 2, 0.001),
    )
    finished = RunRecord(
        run_id=started.run_id,
        created_at=started.created_at,
        trigger_summary=started.trigger_summary,
        states=(StateVisit("Collecting", 1_000_000, 1_000_050), StateVisit("Acting", 1_000_050, 1_000_900)),
        route="PluginLite(tmux)",
        plugins_used=("tmux",),
        redaction_level="amber",
        model_calls=calls,
        decision="notify",
        notification_id="n-1",
        next_wakeup_at=1_600.0,
        finished_at=1_001.0,
    )
    await store.save(finished)
    loaded = await store.get(started.run_id)
    assert loaded == finished
    assert loaded is not None
    assert (loaded.tokens_in, loaded.tokens_out) == (200, 50)
    assert loaded.cost_estimate == 0.003
    assert loaded.states[1].duration_ms == 850


async def test_the_http_api_lists_newest_first_pages_and_filters(engine: AsyncEngine) -> None:
    store = RunStore(engine)
    base = 2_000_000.0 + uuid.uuid4().int % 1_000_000
    saved = [run(base + n, decision="silent" if n == 1 else "notify") for n in range(3)]
    for record in saved:
        await store.save(record)
    app = FastAPI()
    install_error_handler(app)  # as every service's app has it
    install_limits(app)  # as every service's app has it: a bad argument is a 400 with a sentence
    app.include_router(runs_router(operations_over(runs=store)))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://pipeline") as http:
        page = (await http.get("/v1/runs", params={"limit": 2, "before": base + 3})).json()
        assert [r["run_id"] for r in page["runs"]] == [saved[2].run_id, saved[1].run_id]
        assert page["next_before"] == base + 1
        rest = (await http.get("/v1/runs", params={"limit": 2, "before": page["next_before"]})).json()
        assert rest["runs"][0]["run_id"] == saved[0].run_id
        silent = (await http.get("/v1/runs", params={"decision": "silent", "before": base + 3})).json()[
            "runs"
        ]
        assert [r["run_id"] for r in silent] == [saved[1].run_id]
        one = (await http.get(f"/v1/runs/{saved[0].run_id}")).json()
        assert one["decision"] == "notify" and one["created_at"] == base
        assert (await http.get("/v1/runs/nope")).status_code == 404
        bad = await http.get("/v1/runs", params={"limit": 0})
        assert bad.status_code == 400 and "limit" in bad.json()["detail"]
