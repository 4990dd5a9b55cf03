"""The plugin protocol over real NATS: a PluginHost registers its plugin and answers snapshot
requests; registrations land in the PostgreSQL registry; events go out on the plugin's subject."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from kronii.pipeline.adapters.plugin_host import (
    PluginHost,
    PluginUnavailable,
    request_snapshot,
    serve_registrations,
)
from kronii.pipeline.adapters.plugins_store import PluginStore
from kronii.pipeline.api.convert import registration_from_message
from kronii.pipeline.v1 import pipeline_pb2 as pb
from kronii.stores import subjects
from kronii.stores.bus import Bus
from sqlalchemy.ext.asyncio import AsyncEngine


class EchoPlugin:
    def __init__(self, app_id: str, delay: float = 0.0) -> None:
        self.app_id = app_id
        self.delay = delay
        self.requests: list[pb.PluginSnapshotRequest] = []

    @property
    def registration(self) -> pb.PluginRegistration:
        return pb.PluginRegistration(
            app_id=self.app_id, capabilities=pb.PluginCapabilities(snapshot=True, events=True), risk_score=0.2
        )

    async def snapshot(self, request: pb.PluginSnapshotRequest) -> pb.PluginSnapshot:
        self.requests.append(request)
        await asyncio.sleep(self.delay)
        full = "all the data" if request.detail == pb.SNAPSHOT_DETAIL_FULL else ""
        return pb.PluginSnapshot(app_id=self.app_id, detail=request.detail, summary="short", full_text=full)


async def test_a_hosted_plugin_registers_and_answers_summary_or_full(bus: Bus, engine: AsyncEngine) -> None:
    store = PluginStore(engine)
    registered = asyncio.Event()

    async def on_register(registration: pb.PluginRegistration) -> None:
        await store.register(registration_from_message(registration), now=100.0)
        registered.set()

    subscription = await serve_registrations(bus, on_register)
    await bus.client.flush()
    plugin = EchoPlugin(f"echo-{uuid.uuid4().hex[:8]}")
    host = PluginHost(bus, plugin)
    await host.start()
    try:
        await asyncio.wait_for(registered.wait(), 5)
        record = await store.get(plugin.app_id)
        assert record is not None and record.capabilities.snapshot and record.enabled

        summary = await request_snapshot(bus, plugin.app_id, run_id="run-7")
        assert (summary.summary, summary.full_text) == ("short", "")
        full = await request_snapshot(bus, plugin.app_id, pb.SNAPSHOT_DETAIL_FULL)
        assert full.full_text == "all the data"
        assert plugin.requests[0].run_id == "run-7"
    finally:
        await host.stop()
        await subscription.unsubscribe()


async def test_events_are_published_on_the_plugins_subject(bus: Bus) -> None:
    plugin = EchoPlugin(f"events-{uuid.uuid4().hex[:8]}")
    host = PluginHost(bus, plugin, clock=lambda: 50.0)
    received: asyncio.Queue[pb.PluginEvent] = asyncio.Queue()

    async def handler(subject: str, event: pb.PluginEvent) -> None:
        await received.put(event)

    subscription = await bus.subscribe(subjects.PLUGIN_EVENT, handler)
    await bus.client.flush()
    await host.start()
    try:
        await host.publish_event("meeting_joined", {"title": "standup"})
        event = await asyncio.wait_for(received.get(), 5)
        assert (event.app_id, event.kind, dict(event.attributes)) == (
            plugin.app_id,
            "meeting_joined",
            {"title": "standup"},
        )
        assert event.at.seconds == 50
    finally:
        await host.stop()
        await subscription.unsubscribe()


async def test_no_plugin_or_a_slow_plugin_is_reported_not_waited_for(bus: Bus) -> None:
    with pytest.raises(PluginUnavailable, match=r"not running|did not answer"):
        await request_snapshot(bus, f"absent-{uuid.uuid4().hex[:8]}", timeout_secs=0.5)
    slow = EchoPlugin(f"slow-{uuid.uuid4().hex[:8]}", delay=2.0)
    host = PluginHost(bus, slow, snapshot_timeout_secs=0.2)
    await host.start()
    try:
        reply = await request_snapshot(bus, slow.app_id, timeout_secs=2.0)
        assert reply.error.startswith("the plugin took longer than")
    finally:
        await host.stop()
