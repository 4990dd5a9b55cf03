"""A person's delete of the pipeline's decisions on real PostgreSQL, through DELETE /v1/runs: the runs
of a range and the notifications sent in it go (rows counted), others stay; all=true takes every
one; a delete that names neither or both is a 400 with a sentence; each is audited with counts."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any, cast

import httpx
import pytest_asyncio
from fastapi import FastAPI
from kronii.desktop.hold import DesktopHolds
from kronii.edge.api_edge import install_error_handler
from kronii.pipeline.adapters.runs_store import RunStore
from kronii.pipeline.adapters.tables import notifications
from kronii.pipeline.api.runs import runs_router
from kronii.pipeline.core.runs import RunRecord
from kronii.pipeline.metrics import PipelineMetrics
from kronii.pipeline.usecases.forget_runs import ForgetRuns
from kronii.pipeline.usecases.operations import PipelineOperations, PipelineStores
from kronii.pipeline.usecases.runner import Runner
from kronii.pipeline.usecases.show_notice import NoticeDesk
from kronii.stores.db import make_engine, migrate_up
from prometheus_client import CollectorRegistry
from sqlalchemy import func, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.infra import InfraUrls, create_database
from tests.integration.pipeline_adapters.operations import WallClock
from tests.unit.pipeline.runner_fakes import FakeAudit, FakeNotifier, Fakes

BASE = 1_796_500_000.0


@pytest_asyncio.fixture
async def own_engine(infra: InfraUrls) -> AsyncIterator[AsyncEngine]:
    url = create_database(infra.database, f"kronii_pl_forget_{uuid.uuid4().hex[:6]}")
    migrate_up(url)
    engine = make_engine(url)
    try:
        yield engine
    finally:
        await engine.dispose()


def _app(store: RunStore, audit: FakeAudit) -> FastAPI:
    clock = WallClock(lambda: BASE)
    nothing = cast(Any, None)
    operations = PipelineOperations(
        clock=clock,
        stores=PipelineStores(
            runs=store, plugins=nothing, notifications=nothing, controls=nothing, stream=nothing
        ),
        runner=Runner(Fakes().ports(), clock),
        notices=NoticeDesk(FakeNotifier(), DesktopHolds, FakeAudit(), clock),
        metrics=PipelineMetrics(CollectorRegistry()),
        forget=ForgetRuns(store, audit),
    )
    app = FastAPI()
    install_error_handler(app)
    app.include_router(runs_router(lambda: operations))
    return app


async def _count(engine: AsyncEngine, table: Any) -> int:
    async with engine.connect() as conn:
        return int((await conn.execute(select(func.count()).select_from(table))).scalar_one())


async def _note(engine: AsyncEngine, at: float) -> None:
    async with engine.begin() as conn:
        await conn.execute(
            insert(notifications).values(
                id=uuid.uuid4().hex, channel="desktop", title="t", body="b", source_summary="s", source_key="k",
                actions=[], run_id="r", created_at=datetime.fromtimestamp(at, UTC),
            )
        )  # fmt: skip


async def test_a_range_deletes_its_runs_and_notifications_and_all_deletes_the_rest(
    own_engine: AsyncEngine,
) -> None:
    store, audit = RunStore(own_engine), FakeAudit()
    for offset in (0.0, 100.0, 5_000.0):
        await store.save(RunRecord(run_id=f"run-{offset:.0f}", created_at=BASE + offset, decision="silent"))
        await _note(own_engine, BASE + offset)
    transport = httpx.ASGITransport(app=_app(store, audit))
    async with httpx.AsyncClient(transport=transport, base_url="http://pipeline") as http:
        ranged = await http.delete("/v1/runs", params={"since": BASE, "until": BASE + 1_000})
        left = (await http.get("/v1/runs")).json()["runs"]
        neither = await http.delete("/v1/runs")
        both = await http.delete("/v1/runs", params={"all": "true", "since": BASE, "until": BASE + 1})
        half = await http.delete("/v1/runs", params={"since": BASE})
        backwards = await http.delete("/v1/runs", params={"since": BASE + 10, "until": BASE})
        everything = await http.delete("/v1/runs", params={"all": "true"})

    assert ranged.status_code == 200 and ranged.json() == {"deleted_runs": 2, "deleted_notifications": 2}
    assert [run["run_id"] for run in left] == ["run-5000"]
    for refused in (neither, both, half, backwards):
        assert refused.status_code == 400, refused.text
    assert "since and until" in neither.json()["detail"] and "later than since" in backwards.json()["detail"]
    assert everything.json() == {"deleted_runs": 1, "deleted_notifications": 1}
    assert await _count(own_engine, notifications) == 0
    deletes = [row for row in audit.entries if row["action"] == "pipeline.delete"]
    assert [(row["runs_deleted"], row["subject"]) for row in deletes] == [
        (2, f"{BASE:.0f}..{BASE + 1000:.0f}"),
        (1, "all"),
    ]
