"""The SSE broadcaster: per-subscriber bounded queues, a replay buffer and Last-Event-ID."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest
from kronii.pipeline.adapters.notifications import new_notification
from kronii.pipeline.adapters.sse import NotificationBroadcaster, SseEvent, Subscription
from kronii.pipeline.v1 import pipeline_pb2 as pb


def note(n: int) -> pb.Notification:
    return new_notification(
        channel="desktop",
        title=f"t{n}",
        body="b",
        source_summary="s",
        source_key="app:x",
        run_id="r",
        now=1.0,
    )


async def drain(subscription: Subscription, count: int) -> list[SseEvent]:
    events = []
    for _ in range(count):
        event = await subscription.next(1.0)
        assert event is not None
        events.append(event)
    return events


async def test_every_subscriber_gets_every_event_in_order() -> None:
    hub = NotificationBroadcaster(clock=lambda: 5.0)
    first, second = hub.subscribe(), hub.subscribe()
    ids = [hub.publish(note(n)) for n in range(3)]
    assert ids == [5000, 5001, 5002]
    for subscription in (first, second):
        events = await drain(subscription, 3)
        assert [json.loads(e.data)["title"] for e in events] == ["t0", "t1", "t2"]
        assert [e.id for e in events] == ids


async def test_a_subscriber_that_falls_behind_is_dropped_without_slowing_the_others() -> None:
    hub = NotificationBroadcaster(queue_size=2)
    slow, fast = hub.subscribe(), hub.subscribe()
    for n in range(2):
        hub.publish(note(n))
    await drain(fast, 2)
    hub.publish(note(2))
    assert slow.lagged and hub.subscriber_count == 1
    assert [e.id for e in await drain(slow, 2)] == [hub.last_event_id - 2, hub.last_event_id - 1]
    assert await slow.next(1.0) is None  # then its stream ends; the client reconnects with Last-Event-ID
    assert (await drain(fast, 1))[0].id == hub.last_event_id


async def test_last_event_id_replays_what_was_missed_from_the_buffer() -> None:
    hub = NotificationBroadcaster(replay_size=3)
    ids = [hub.publish(note(n)) for n in range(5)]
    resumed = hub.subscribe(last_event_id=ids[2])
    assert [e.id for e in await drain(resumed, 2)] == ids[3:]
    fresh = hub.subscribe()
    with pytest.raises(TimeoutError):
        await fresh.next(0.05)


async def test_unsubscribing_ends_the_iteration() -> None:
    hub = NotificationBroadcaster()
    async with hub.subscribe() as subscription:
        hub.publish(note(1))
        got = [event async for event in _first(subscription)]
    assert len(got) == 1 and hub.subscriber_count == 0


async def _first(subscription: Subscription) -> AsyncIterator[SseEvent]:
    async for event in subscription:
        yield event
        asyncio.get_running_loop().call_soon(subscription.close)


def test_an_event_encodes_multi_line_data_as_several_data_fields() -> None:
    assert SseEvent(7, "notification", "a\nb").encode() == b"id: 7\nevent: notification\ndata: a\ndata: b\n\n"
