"""GET /v1/notifications/stream served by a real uvicorn: events arrive as they are published, and
a client that reconnects with Last-Event-ID gets what it missed."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator

import httpx
import pytest_asyncio
import uvicorn
from fastapi import FastAPI
from kronii.launcher.infra import free_port
from kronii.pipeline.adapters.notifications import new_notification
from kronii.pipeline.adapters.sse import NotificationBroadcaster
from kronii.pipeline.api.notifications_stream import notifications_stream_router

from tests.integration.pipeline_adapters.operations import operations_over


@pytest_asyncio.fixture
async def served() -> AsyncIterator[tuple[str, NotificationBroadcaster]]:
    hub = NotificationBroadcaster()
    app = FastAPI()
    app.include_router(notifications_stream_router(operations_over(stream=hub), keepalive_secs=0.2))
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    task = asyncio.get_running_loop().create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}", hub
    finally:
        hub.close()
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, 10)


async def read_events(response: httpx.Response, count: int) -> list[dict[str, str]]:
    """Parse SSE frames until `count` events (keepalive comments are skipped)."""
    events: list[dict[str, str]] = []
    frame: dict[str, str] = {}
    async for line in response.aiter_lines():
        if line == "":
            if "data" in frame:
                events.append(frame)
                if len(events) == count:
                    return events
            frame = {}
        elif not line.startswith(":"):
            key, _, value = line.partition(": ")
            frame[key] = value
    raise AssertionError(f"the stream ended after {len(events)} events")


def note(title: str) -> object:
    return new_notification(
        channel="desktop", title=title, body="b", source_summary="s", source_key="app:x", run_id="r", now=1.0
    )


async def test_events_stream_live_and_resume_after_last_event_id(
    served: tuple[str, NotificationBroadcaster],
) -> None:
    url, hub = served
    async with httpx.AsyncClient(base_url=url, timeout=10) as http:
        async with http.stream("GET", "/v1/notifications/stream") as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            while hub.subscriber_count == 0:
                await asyncio.sleep(0.01)
            hub.publish(note("first"))  # type: ignore[arg-type]
            (first,) = await asyncio.wait_for(read_events(response, 1), 5)
        assert first["event"] == "notification"
        assert json.loads(first["data"])["title"] == "first"
        for _ in range(50):  # the server notices the disconnect and drops the subscriber
            if hub.subscriber_count == 0:
                break
            await asyncio.sleep(0.05)
        assert hub.subscriber_count == 0

        hub.publish(note("missed-1"))  # type: ignore[arg-type]
        hub.publish(note("missed-2"))  # type: ignore[arg-type]
        headers = {"last-event-id": first["id"]}
        async with http.stream("GET", "/v1/notifications/stream", headers=headers) as response:
            replayed = await asyncio.wait_for(read_events(response, 2), 5)
        assert [json.loads(e["data"])["title"] for e in replayed] == ["missed-1", "missed-2"]
        assert [int(e["id"]) for e in replayed] == [int(first["id"]) + 1, int(first["id"]) + 2]


async def test_the_stream_opens_with_the_reconnect_delay_and_keeps_an_idle_connection_alive(
    served: tuple[str, NotificationBroadcaster],
) -> None:
    url, _hub = served
    lines: list[str] = []
    async with (
        httpx.AsyncClient(base_url=url, timeout=10) as http,
        http.stream("GET", "/v1/notifications/stream") as response,
    ):
        assert response.headers["cache-control"] == "no-cache"
        assert response.headers["x-accel-buffering"] == "no"  # nginx must not buffer the stream

        async def until_two_keepalives() -> None:
            async for line in response.aiter_lines():
                lines.append(line)
                if lines.count(": keepalive") == 2:
                    return

        await asyncio.wait_for(until_two_keepalives(), 5)
    assert lines[:2] == ["retry: 2000", ""]
    assert [line for line in lines if line] == ["retry: 2000", ": keepalive", ": keepalive"]
