"""The plugin registry in PostgreSQL and its HTTP API (list, enable, disable)."""

from __future__ import annotations

import uuid

import httpx
from fastapi import FastAPI
from kronii.edge.api_edge import install_error_handler
from kronii.pipeline.adapters.plugins_store import PluginStore
from kronii.pipeline.api.convert import registration_from_message
from kronii.pipeline.api.plugins import plugins_router
from kronii.pipeline.core.plugins import PluginRegistration
from kronii.pipeline.v1 import pipeline_pb2 as pb
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.integration.pipeline_adapters.operations import operations_over


def registration(app_id: str, risk: float = 0.2, **caps: bool) -> PluginRegistration:
    message = pb.PluginRegistration(
        app_id=app_id,
        display_name=f"{app_id} plugin",
        capabilities=pb.PluginCapabilities(**caps),
        risk_score=risk,
        version="1.0",
    )
    return registration_from_message(message)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


async def test_a_new_low_risk_plugin_starts_enabled_and_a_high_risk_one_disabled(engine: AsyncEngine) -> None:
    store = PluginStore(engine, auto_enable_below=0.5)
    low = await store.register(registration(unique("calendar"), 0.1, snapshot=True, events=True), now=10.0)
    high = await store.register(registration(unique("bank"), 0.9, snapshot=True), now=10.0)
    assert low.enabled and low.installed and low.usable
    assert low.capabilities.snapshot and low.capabilities.events and not low.capabilities.redact_hint
    assert not high.enabled and not high.usable
    assert (await store.get(low.app_id)) == low


async def test_re_registering_refreshes_the_plugin_but_keeps_the_users_choice(engine: AsyncEngine) -> None:
    store = PluginStore(engine)
    app_id = unique("tmux")
    await store.register(registration(app_id, 0.1), now=10.0)
    await store.set_enabled(app_id, False, now=11.0)
    again = await store.register(registration(app_id, 0.3, summarize=True), now=20.0)
    assert not again.enabled
    assert again.risk_score == 0.3 and again.capabilities.summarize
    assert again.registered_at == 10.0 and again.last_seen_at == 20.0


async def test_the_http_api_lists_enables_and_disables(engine: AsyncEngine) -> None:
    store = PluginStore(engine)
    app_id = unique("browser")
    await store.register(registration(app_id, 0.8), now=10.0)
    app = FastAPI()
    install_error_handler(app)  # as every service's app has it
    app.include_router(plugins_router(operations_over(plugins=store, wall=lambda: 30.0)))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://pipeline") as http:
        listed = (await http.get("/v1/plugins")).json()["plugins"]
        assert any(p["app_id"] == app_id and p["enabled"] is False for p in listed)
        enabled = await http.post(f"/v1/plugins/{app_id}/enable")
        assert enabled.status_code == 200 and enabled.json()["enabled"] is True
        assert enabled.json()["updated_at"] == 30.0
        assert (await store.get(app_id)).enabled  # type: ignore[union-attr]
        disabled = await http.post(f"/v1/plugins/{app_id}/disable")
        assert disabled.json()["enabled"] is False
        missing = await http.post("/v1/plugins/no-such-plugin/enable")
        assert missing.status_code == 404 and "no plugin 'no-such-plugin'" in missing.json()["detail"]
        assert (await http.get("/v1/plugins/no-such-plugin")).status_code == 404
        assert (await http.get(f"/v1/plugins/{app_id}")).json()["capabilities"]["snapshot"] is False
