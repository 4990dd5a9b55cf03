"""GET /v1/notifications/stream: notifications as server-sent events (text/event-stream), resumed
after the Last-Event-ID header or ?last_event_id= from the broadcaster's replay buffer."""

from __future__ import annotations

from collections.abc import AsyncIterator

from fastapi import APIRouter, Request
from kronii.pipeline.api.source import OperationsSource
from kronii.pipeline.ports import SSE_SEPARATOR, StreamEvent, StreamSubscription
from sse_starlette import EventSourceResponse, ServerSentEvent

__all__ = ["RECONNECT_MS", "notifications_stream_router"]

# How long a browser waits before it reconnects, sent once when the stream opens.
RECONNECT_MS = 2000


def _last_event_id(request: Request) -> int | None:
    raw = request.headers.get("last-event-id") or request.query_params.get("last_event_id")
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError:
        return None  # a browser may send an id from another server; start fresh rather than fail


def _frame(event: StreamEvent) -> ServerSentEvent:
    return ServerSentEvent(event.data, event=event.event, id=str(event.id), sep=SSE_SEPARATOR)


def notifications_stream_router(operations: OperationsSource, *, keepalive_secs: float = 15.0) -> APIRouter:
    """GET /v1/notifications/stream (text/event-stream; Last-Event-ID header or ?last_event_id=)."""
    router = APIRouter(prefix="/v1/notifications", tags=["notifications"])

    async def events(subscription: StreamSubscription) -> AsyncIterator[ServerSentEvent]:
        async with subscription:
            # Opens the stream at once, with the browser's reconnect delay.
            yield ServerSentEvent(retry=RECONNECT_MS, sep=SSE_SEPARATOR)
            async for event in subscription:
                yield _frame(event)

    @router.get(
        "/stream",
        response_class=EventSourceResponse,
        responses={200: {"description": "server-sent events", "content": {"text/event-stream": {}}}},
    )
    async def stream(request: Request) -> EventSourceResponse:
        subscription = operations().subscribe_notifications(_last_event_id(request))
        return EventSourceResponse(
            events(subscription),
            headers={"cache-control": "no-cache"},
            ping=keepalive_secs,
            ping_message_factory=lambda: ServerSentEvent(comment="keepalive", sep=SSE_SEPARATOR),
            sep=SSE_SEPARATOR,
        )

    return router
