"""The bus against a real nats-server: protobuf payloads, trace context in headers, reconnects."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import pytest
from google.protobuf.message import Message
from kronii.activity.v1 import activity_pb2 as pb
from kronii.launcher.infra import EmbeddedInfra, InfraPorts, free_port
from kronii.scheduler.v1 import scheduler_pb2 as spb
from kronii.stores import subjects
from kronii.stores.bus import TYPE_HEADER, Bus, BusError, decode_message
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

    await subscriber.subscribe(subjects.FOCUS_CHANGED, handler)
    await subscriber.client.flush()
    tracer = trace.get_tracer("test")
    with tracer.start_as_current_span("publisher") as span:
        sent_trace = span.get_span_context().trace_id
        await publisher.publish(
            subjects.FOCUS_CHANGED,
            pb.FocusChanged(current=pb.Focus(app_name="xterm", title="build"), change="app"),
        )
    subject, message, trace_id = await asyncio.wait_for(received.get(), 5)
    assert subject == "kronii.activity.focus_changed"
    assert message.current.app_name == "xterm"
    assert message.change == "app"
    assert trace_id == sent_trace != 0
    await publisher.close()
    await subscriber.close()


async def test_bus_subscribe_any_decodes_each_subject_as_its_topic_says(infra: InfraUrls) -> None:
    bus = Bus("test-any")
    await bus.connect(infra.nats)
    got: asyncio.Queue[tuple[str, Message]] = asyncio.Queue()

    async def handler(subject: str, message: Message) -> None:
        await got.put((subject, message))

    await bus.subscribe_any(subjects.ACTIVITY_ALL, handler)
    await bus.client.flush()
    # No topic of kronii's: dropped rather than handed on undecoded.
    await bus.client.publish(f"{subjects.ACTIVITY_PREFIX}.not_a_kind", b"\x08\x01")
    await bus.publish(subjects.LOCK_CHANGED, pb.LockChanged(locked=True, source="logind"))
    subject, message = await asyncio.wait_for(got.get(), 5)
    assert subject == "kronii.activity.lock_changed"
    assert isinstance(message, pb.LockChanged)
    assert message.locked is True
    await bus.close()


async def test_bus_subscriber_drops_a_payload_whose_type_header_is_not_the_topics(infra: InfraUrls) -> None:
    bus = Bus("test-wrong-type")
    await bus.connect(infra.nats)
    got: asyncio.Queue[pb.FocusChanged] = asyncio.Queue()

    async def handler(_subject: str, message: pb.FocusChanged) -> None:
        await got.put(message)

    await bus.subscribe(subjects.FOCUS_CHANGED, handler)
    await bus.client.flush()
    wrong = pb.LockChanged(locked=True)
    await bus.client.publish(
        subjects.FOCUS_CHANGED.subject(),
        wrong.SerializeToString(),
        headers={TYPE_HEADER: "kronii.activity.v1.LockChanged"},
    )
    await bus.publish(subjects.FOCUS_CHANGED, pb.FocusChanged(change="app"))
    first = await asyncio.wait_for(got.get(), 5)
    assert first.change == "app"
    assert got.empty()
    await bus.close()


async def test_bus_request_is_answered_by_serve_and_an_undecodable_request_gets_its_answer(
    infra: InfraUrls,
) -> None:
    server, client = Bus("test-serve"), Bus("test-request")
    await server.connect(infra.nats)
    await client.connect(infra.nats)
    topic = subjects.RequestTopic("kronii.test.admit", spb.AdmitRequest, reply_type=spb.AdmitResponse)

    async def answer(request: spb.AdmitRequest) -> spb.AdmitResponse:
        return spb.AdmitResponse(allowed=request.app == "code", reason="admitted")

    def undecodable(reason: str) -> spb.AdmitResponse:
        return spb.AdmitResponse(allowed=False, reason="invalid", detail=reason)

    await server.serve(topic, answer, queue="test", on_undecodable=undecodable)
    await server.client.flush()

    reply = await client.request(topic, spb.AdmitRequest(app="code"), wait_secs=5)
    raw = await client.client.request(topic.subject(), b"\xff\xff", timeout=5)

    assert isinstance(reply, spb.AdmitResponse)
    assert (reply.allowed, reply.reason) == (True, "admitted")
    refused = spb.AdmitResponse.FromString(raw.data)
    assert (refused.allowed, refused.reason) == (False, "invalid")
    assert "kronii.scheduler.v1.AdmitRequest" in refused.detail
    await server.close()
    await client.close()


def test_decode_message_rejects_unknown_type() -> None:
    with pytest.raises(BusError, match="unknown message type"):
        decode_message("kronii.nope.v1.Missing", b"")
    assert TYPE_HEADER == "Kronii-Type"


def test_activity_topics_come_from_one_module() -> None:
    assert subjects.activity_topic("state_changed").subject() == "kronii.activity.state_changed"
    assert subjects.activity_topic("state_changed").message_type is pb.StateChanged
    with pytest.raises(ValueError, match="unknown activity event"):
        subjects.activity_topic("keystrokes")


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

            await bus.subscribe(subjects.ACTIVITY_PULSE, handler)
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
            await bus.publish(subjects.ACTIVITY_PULSE, pb.ActivityPulse(source="after-restart"))
            message = await asyncio.wait_for(got.get(), 5)
            assert message.source == "after-restart"
        finally:
            await bus.close()
            infra.stop()
