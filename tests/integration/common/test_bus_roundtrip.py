"""The bus against a real nats-server: protobuf payloads, trace context in headers, reconnects."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import pytest
from google.protobuf.message import Message
from kronii.activity.v1 import activity_pb2 as pb
from kronii.common import subjects
from kronii.common.bus import TYPE_HEADER, Bus, BusError, decode_message
from kronii.common.infra import EmbeddedInfra, InfraPorts, free_port
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

from tests.infra import InfraUrls

if not isinstance(trace.get_tracer_provider(), TracerProvider):
    trace.set_tracer_provider(TracerProvider())


async def test_bus_round_trip_carries_payload_and_trace_context(infra: InfraUrls) -> None:
    publisher, subscriber = Bus("test-pub"), Bus("test-sub")
    await publisher.connect(infra.nats)
    await subscriber.connect(infra.nats)
    received: asyncio.Queue[tuple[str, pb.FocusChanged, int]] = asyncio.Queue()

    async def handler(subject: str, message: pb.FocusChanged) -> None:
        trace_id = trace.get_current_span().get_span_context().trace_id
        await received.put((subject, message, trace_id))

    await subscriber.subscribe(subjects.activity("focus_changed"), pb.FocusChanged, handler)
    await subscriber.client.flush()
    tracer = trace.get_tracer("test")
    with tracer.start_as_current_span("publisher") as span:
        sent_trace = span.get_span_context().trace_id
        await publisher.publish(
            subjects.activity("focus_changed"),
            pb.FocusChanged(current=pb.Focus(app_name="xterm", title="build"), change="app"),
        )
    subject, message, trace_id = await asyncio.wait_for(received.get(), 5)
    assert subject == "kronii.activity.focus_changed"
    assert message.current.app_name == "xterm"
    assert message.change == "app"
    assert trace_id == sent_trace != 0
    await publisher.close()
    await subscriber.close()


async def test_bus_subscribe_any_decodes_by_type_header(infra: InfraUrls) -> None:
    bus = Bus("test-any")
    await bus.connect(infra.nats)
    got: asyncio.Queue[Message] = asyncio.Queue()

    async def handler(subject: str, message: Message) -> None:
        await got.put(message)

    await bus.subscribe_any("kronii.activity.test.>", handler)
    await bus.client.flush()
    await bus.publish("kronii.activity.test.lock", pb.LockChanged(locked=True, source="logind"))
    message = await asyncio.wait_for(got.get(), 5)
    assert isinstance(message, pb.LockChanged)
    assert message.locked is True
    await bus.close()


def test_decode_message_rejects_unknown_type() -> None:
    with pytest.raises(BusError, match="unknown message type"):
        decode_message("kronii.nope.v1.Missing", b"")
    assert TYPE_HEADER == "Kronii-Type"


def test_activity_subject_names_come_from_one_module() -> None:
    assert subjects.activity("state_changed") == "kronii.activity.state_changed"
    with pytest.raises(ValueError, match="unknown activity event"):
        subjects.activity("keystrokes")


async def test_bus_keeps_subscriptions_across_a_server_restart() -> None:
    """nats-server goes away and comes back on the same port; the subscription still delivers."""
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        infra = EmbeddedInfra(Path(tmp), InfraPorts(port, free_port(), free_port()))
        url = infra.start(nats_url=None, redis_url="redis://unused", database_url="postgresql://unused")[
            "nats"
        ].url
        bus = Bus("test-reconnect")
        try:
            await bus.connect(url)
            got: asyncio.Queue[pb.ActivityPulse] = asyncio.Queue()

            async def handler(subject: str, message: pb.ActivityPulse) -> None:
                await got.put(message)

            await bus.subscribe(subjects.activity("activity_pulse"), pb.ActivityPulse, handler)
            await bus.client.flush()
            infra.stop()
            await asyncio.sleep(0.3)
            assert not bus.connected
            infra = EmbeddedInfra(Path(tmp), InfraPorts(port, free_port(), free_port()))
            infra.start(nats_url=None, redis_url="redis://unused", database_url="postgresql://unused")
            for _ in range(100):
                if bus.connected:
                    break
                await asyncio.sleep(0.1)
            assert bus.connected
            await bus.publish(subjects.activity("activity_pulse"), pb.ActivityPulse(source="after-restart"))
            message = await asyncio.wait_for(got.get(), 5)
            assert message.source == "after-restart"
        finally:
            await bus.close()
            infra.stop()
