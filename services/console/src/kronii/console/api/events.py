"""GET /events?topics=activity,agents,...: server-sent events from NATS (through the live hub), one
event per update, named by its topic, its data a small JSON object of names, ids and states. A page
that leaves is forgotten at once; a page that does not keep up loses its oldest updates."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import APIRouter, Request
from kronii.console.usecases.live_updates import LiveHub
from kronii.foundation.errors import InvalidArgument
from sse_starlette.sse import EventSourceResponse

__all__ = ["events_router"]

# A comment line this often keeps proxies and the browser from closing a quiet stream.
_PING_SECS = 15


def _topics(raw: str, known: frozenset[str]) -> list[str]:
    topics = [topic.strip() for topic in raw.split(",") if topic.strip()]
    if not topics:
        raise InvalidArgument(f"name the topics to follow: topics={','.join(sorted(known))}", field="topics")
    unknown = sorted(set(topics) - known)
    if unknown:
        raise InvalidArgument(
            f"unknown topic {unknown[0]!r}; known: {', '.join(sorted(known))}", field="topics"
        )
    return topics


def events_router(hub: Callable[[], LiveHub]) -> APIRouter:
    router = APIRouter(tags=["console"])

    @router.get("/events")
    async def events(request: Request, topics: str = "") -> EventSourceResponse:
        live = hub()
        wanted = _topics(topics, live.topics)

        async def stream() -> AsyncIterator[dict[str, Any]]:
            async with live.listen(wanted) as queue:
                yield {"event": "ready", "data": json.dumps({"topics": wanted})}
                while True:
                    try:
                        update = await asyncio.wait_for(queue.get(), timeout=_PING_SECS)
                    except TimeoutError:
                        if await request.is_disconnected():
                            return
                        continue
                    yield {"event": update.topic, "data": json.dumps(update.data)}

        return EventSourceResponse(stream(), ping=_PING_SECS, send_timeout=10)

    return router
