"""Notifications as server-sent events, fanned out to the subscribers of GET
/v1/notifications/stream (api/notifications_stream.py).

Each subscriber has a bounded queue; one that falls behind is disconnected rather than let grow
(or slow the others), and comes back with Last-Event-ID to get what it missed from the replay
buffer. Event ids start at the wall clock in milliseconds, so they keep increasing across a
restart of the service and an old Last-Event-ID never hides new events.

The broadcaster is written here; sse-starlette frames the events (and, in the router, sends the
keep-alive comments and notices a client that went away)."""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from kronii.edge.api_edge import as_json
from kronii.pipeline.ports import SSE_SEPARATOR
from kronii.pipeline.v1 import pipeline_pb2 as pb
from sse_starlette import ServerSentEvent

__all__ = ["NotificationBroadcaster", "SseEvent", "Subscription"]

EVENT_NAME = "notification"


@dataclass(frozen=True, slots=True)
class SseEvent:
    id: int
    event: str
    data: str

    def frame(self) -> ServerSentEvent:
        return ServerSentEvent(self.data, event=self.event, id=str(self.id), sep=SSE_SEPARATOR)

    def encode(self) -> bytes:
        return self.frame().encode()


class _Lagged:
    """Put in a subscriber's queue instead of the event that did not fit: it ends the stream."""


class Subscription:
    """An async iterator over the events for one subscriber; use it as a context manager so it
    is removed from the broadcaster when the client goes away."""

    def __init__(self, broadcaster: NotificationBroadcaster, backlog: list[SseEvent], size: int) -> None:
        self._broadcaster = broadcaster
        # Unbounded as a Queue, bounded by offer(): room for the replayed backlog plus `size`.
        self._queue: asyncio.Queue[SseEvent | _Lagged | None] = asyncio.Queue()
        self._limit = size + len(backlog)
        for event in backlog:
            self._queue.put_nowait(event)
        self.lagged = False

    def offer(self, event: SseEvent) -> bool:
        """Queue an event without waiting; False (and the subscription ends) when it is full."""
        if self.lagged:
            return False
        if self._queue.qsize() >= self._limit:
            self.lagged = True
            self._queue.put_nowait(_Lagged())
            return False
        self._queue.put_nowait(event)
        return True

    def close(self) -> None:
        self._queue.put_nowait(None)

    async def next(self, wait_secs: float | None = None) -> SseEvent | None:
        """The next event; None when the subscription ended (closed or lagged). TimeoutError if
        nothing came within `wait_secs`."""
        item = await asyncio.wait_for(self._queue.get(), wait_secs)
        if isinstance(item, SseEvent):
            return item
        return None

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> SseEvent:
        event = await self.next()
        if event is None:
            raise StopAsyncIteration
        return event

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._broadcaster.unsubscribe(self)


class NotificationBroadcaster:
    def __init__(
        self, *, queue_size: int = 64, replay_size: int = 100, clock: Callable[[], float] = time.time
    ) -> None:
        if queue_size < 1 or replay_size < 0:
            raise ValueError("queue_size must be at least 1 and replay_size not negative")
        self._queue_size = queue_size
        self._replay: deque[SseEvent] = deque(maxlen=replay_size)
        self._subscribers: set[Subscription] = set()
        self._next_id = int(clock() * 1000)

    @property
    def subscriber_count(self) -> int:
        return len(self._subscribers)

    @property
    def last_event_id(self) -> int:
        return self._next_id - 1

    def publish(self, message: pb.Notification) -> int:
        """Send to every subscriber now (never waits); returns the event id."""
        event = SseEvent(self._next_id, EVENT_NAME, json.dumps(as_json(message), ensure_ascii=False))
        self._next_id += 1
        self._replay.append(event)
        for subscriber in list(self._subscribers):
            if not subscriber.offer(event):
                self._subscribers.discard(subscriber)
        return event.id

    def subscribe(self, last_event_id: int | None = None) -> Subscription:
        """A new subscriber; with `last_event_id` it first gets the buffered events after it."""
        backlog = [] if last_event_id is None else [e for e in self._replay if e.id > last_event_id]
        subscription = Subscription(self, backlog, self._queue_size)
        self._subscribers.add(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        self._subscribers.discard(subscription)
        subscription.close()

    def close(self) -> None:
        """End every stream (on shutdown)."""
        for subscription in list(self._subscribers):
            self.unsubscribe(subscription)
