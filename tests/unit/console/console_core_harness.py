"""The console's edge and pages in process, for the unit tests of helper B's files: the real routers,
the real edge (api/security.py) and the shared body limits, sessions in memory, a ManualClock, and a
fake sensor that answers GET /v1/activity/spans and /summary in the sensor's own shapes (clipping and
sorting as the sensor does). What only real servers show is in tests/integration/console."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx
from fastapi import FastAPI
from kronii.console.adapters.sensor_history import SensorHistory, iso_utc
from kronii.console.adapters.sessions import MemorySessions
from kronii.console.api.pages import discovered_pages
from kronii.console.api.security import ConsoleEdge, EdgeState, NavEntry
from kronii.console.app import ConsoleApp
from kronii.console.core.timeline import Span
from kronii.console.ports import ServiceNotAnswering
from kronii.console.settings import ConsoleSettings
from kronii.console.usecases.live_updates import LiveHub
from kronii.console.usecases.show_today import ShowToday
from kronii.console.usecases.sign_in import SignIn
from kronii.edge.limits import install_limits
from kronii.foundation.clock import ManualClock

BASE = "http://127.0.0.1:8109"


def _seconds(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


@dataclass
class FakeSensor:
    """The sensor's /v1/activity routes over a list of spans; `down` makes it not answer."""

    spans: list[Span] = field(default_factory=list)
    down: bool = False
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    async def get_json(self, service: str, path: str, params: Mapping[str, Any] | None = None) -> Any:
        query = {key: value for key, value in (params or {}).items() if value is not None}
        self.calls.append((path, query))
        if self.down or service != "sensor":
            raise ServiceNotAnswering(service, "it cannot be reached (is `kronii up` running it?)")
        since, until = _seconds(query["since"]), _seconds(query["until"])
        if path == "/v1/activity/spans":
            return self._spans(since, until, query)
        if path == "/v1/activity/summary":
            return self._summary(since, until, str(query.get("by", "app")))
        raise ServiceNotAnswering(service, "no such route", status=404)

    async def post_json(self, service: str, path: str, body: Any = None) -> Any:
        raise ServiceNotAnswering(service, "no such route", status=404)

    async def delete_json(self, service: str, path: str, params: Mapping[str, Any] | None = None) -> Any:
        raise ServiceNotAnswering(service, "no such route", status=404)

    def _overlapping(self, since: float, until: float, kind: str | None = None) -> list[Span]:
        return sorted(
            (s for s in self.spans if s.end > since and s.start < until and (kind is None or s.kind == kind)),
            key=lambda s: s.start,
        )

    def _spans(self, since: float, until: float, query: Mapping[str, Any]) -> dict[str, Any]:
        spans = self._overlapping(since, until, query.get("kind"))
        offset = int(query.get("cursor") or 0)
        limit = int(query.get("limit", 500))
        page = spans[offset : offset + limit]
        more = offset + limit < len(spans)
        return {
            "spans": [
                {
                    "id": offset + i,
                    "kind": s.kind,
                    "start": iso_utc(s.start),
                    "end": iso_utc(s.end),
                    "app": s.app,
                    "title": s.title,
                    "window_id": 1,
                    "wm_class": s.app,
                    "state": s.state,
                }
                for i, s in enumerate(page)
            ],
            "next_cursor": str(offset + limit) if more else None,
        }

    def _summary(self, since: float, until: float, by: str) -> dict[str, Any]:
        kind = "state" if by == "state" else "focus"
        sums: dict[tuple[str, str | None], float] = {}
        for s in self._overlapping(since, until, kind):
            key = (s.state or "") if by == "state" else (s.title or "") if by == "title" else (s.app or "")
            app = None if by == "state" else s.app
            sums[(key, app)] = sums.get((key, app), 0.0) + min(s.end, until) - max(s.start, since)
        rows = sorted(sums.items(), key=lambda item: -item[1])
        return {
            "by": by,
            "since": iso_utc(since),
            "until": iso_utc(until),
            "total_seconds": round(sum(sums.values()), 3),
            "rows": [{"key": k, "app": a, "seconds": round(v, 3)} for (k, a), v in rows],
        }


@dataclass
class Console:
    app: FastAPI
    clock: ManualClock
    sign_in: SignIn
    sensor: FakeSensor
    audit: list[dict[str, Any]]

    def client(self, **headers: str) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            transport=httpx.ASGITransport(app=self.app),
            base_url=BASE,
            headers=headers,
            follow_redirects=False,
        )

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[httpx.AsyncClient]:
        """A signed-in client for the `async with` block."""
        async with self.client() as client:
            link = (await client.post("/console/link", headers={"x-kronii-console": "link"})).json()["url"]
            assert (await client.get(link.removeprefix(BASE))).status_code == 303
            yield client

    async def logged_in(self) -> httpx.AsyncClient:
        """A client holding a session cookie, opened through a real one-time link."""
        client = self.client()
        link = (await client.post("/console/link", headers={"x-kronii-console": "link"})).json()["url"]
        answer = await client.get(link.removeprefix(BASE))
        assert answer.status_code == 303, answer.text
        return client


def build_console(*, start: datetime | None = None, tz: Any = UTC, max_body: int = 64 * 1024) -> Console:
    clock = ManualClock((start or datetime(2026, 12, 6, 15, 0, tzinfo=UTC)).timestamp())
    audit: list[dict[str, Any]] = []

    async def record(**row: Any) -> None:
        audit.append(row)

    sign_in = SignIn(MemorySessions(), clock, record, link_secs=120, idle_secs=3600)
    sensor = FakeSensor()
    console = ConsoleApp(clock=clock, settings=ConsoleSettings())
    console._sign_in = sign_in
    console._hub = LiveHub(["activity", "agents"])
    pages = [page for page in discovered_pages() if page.slug == "today"]
    console._pages = pages
    edge = EdgeState(
        sign_in=sign_in,
        record=record,
        nav=[NavEntry(page.slug, page.title) for page in pages],
        page_states={"today": ShowToday(SensorHistory(sensor), clock, tz)},
    )
    app = FastAPI()
    for router in console.routers():
        app.include_router(router)
    install_limits(app, max_body=max_body)
    app.add_middleware(ConsoleEdge, state=lambda: edge, max_body=max_body)
    return Console(app, clock, sign_in, sensor, audit)


def focus(app: str, start: float, secs: float, title: str = "") -> Span:
    return Span("focus", start, start + secs, app=app, title=title or f"{app} window")


def state(name: str, start: float, secs: float) -> Span:
    return Span("state", start, start + secs, state=name)
