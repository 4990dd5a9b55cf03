"""Snooze and disable: POST /v1/notifications/{id}/snooze and /disable act on the notification's
source, stored in PostgreSQL, and the core's check sees them."""

from __future__ import annotations

import uuid

import httpx
from fastapi import FastAPI
from kronii.edge.api_edge import install_error_handler
from kronii.pipeline.adapters.controls import SourceControls, is_muted
from kronii.pipeline.adapters.notifications import NotificationStore, new_notification
from kronii.pipeline.api.controls import controls_router
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.integration.pipeline_adapters.operations import operations_over


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


async def test_snooze_and_disable_through_http_mute_the_source(engine: AsyncEngine) -> None:
    notifications, controls, clock = NotificationStore(engine), SourceControls(engine), Clock()
    source = f"app:{uuid.uuid4().hex[:8]}"
    note = new_notification(
        channel="desktop", title="Tests failed", body="2 failed", source_summary="tmux pane",
        source_key=source, run_id="run-1", now=clock(),
    )  # fmt: skip
    await notifications.save(note)
    assert (await notifications.get(note.id)) == note
    app = FastAPI()
    install_error_handler(app)  # as every service's app has it
    app.include_router(
        controls_router(operations_over(notifications=notifications, controls=controls, wall=clock))
    )
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://pipeline") as http:
        snoozed = await http.post(f"/v1/notifications/{note.id}/snooze", json={"duration_secs": 600})
        assert snoozed.status_code == 200
        assert snoozed.json()["snoozed_until"] == clock.now + 600
        assert is_muted(await controls.active(clock.now), source, clock.now + 599)
        assert not is_muted(await controls.active(clock.now + 601), source, clock.now + 601)

        assert (await http.post(f"/v1/notifications/{note.id}/disable")).json()["disabled"] is True
        assert is_muted(await controls.active(clock.now + 10**6), source, clock.now + 10**6)
        listed = (await http.get("/v1/controls")).json()["controls"]
        assert any(c["source_key"] == source and c["notification_id"] == note.id for c in listed)

        assert (await http.delete(f"/v1/controls/{source}")).status_code == 200
        assert await controls.get(source) is None
        assert (await http.delete(f"/v1/controls/{source}")).status_code == 404


async def test_bad_snooze_requests_get_a_reason(engine: AsyncEngine) -> None:
    notifications, controls = NotificationStore(engine), SourceControls(engine)
    sourceless = new_notification(
        channel="desktop", title="t", body="b", source_summary="", source_key="", run_id="r", now=1.0
    )
    await notifications.save(sourceless)
    assert not sourceless.actions  # nothing to snooze, so no entry point is offered
    app = FastAPI()
    install_error_handler(app)  # as every service's app has it
    app.include_router(controls_router(operations_over(notifications=notifications, controls=controls)))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://pipeline") as http:
        missing = await http.post("/v1/notifications/nope/snooze")
        assert missing.status_code == 404
        conflict = await http.post(f"/v1/notifications/{sourceless.id}/disable")
        assert conflict.status_code == 409 and "no source" in conflict.json()["detail"]
        too_long = await http.post(f"/v1/notifications/{sourceless.id}/snooze", json={"duration_secs": 10**9})
        assert too_long.status_code == 400 and "duration_secs" in too_long.json()["detail"]
        not_json = await http.post(f"/v1/notifications/{sourceless.id}/snooze", content=b"{")
        assert not_json.status_code == 400
