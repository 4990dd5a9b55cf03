"""The Captures, Decisions, Shell and Privacy pages in process: the real routers, templates and edge
(sessions in memory, CSRF, the body limit) from helper B's harness, each page's real `build` with its
real adapters, and the other services answered in process in their own JSON shapes (the shapes their
routes answer with, as their own tests check). What only the real services show is in
tests/integration/console and tests/e2e/console."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
from fastapi import FastAPI
from kronii.console.adapters.sessions import MemorySessions
from kronii.console.api.pages import discovered_pages
from kronii.console.api.security import ConsoleEdge, EdgeState, NavEntry
from kronii.console.app import ConsoleApp
from kronii.console.deps import ConsoleDeps, ServiceClients
from kronii.console.ports import ServiceNotAnswering
from kronii.console.settings import ConsoleSettings
from kronii.console.usecases.live_updates import LiveHub
from kronii.console.usecases.sign_in import SignIn
from kronii.edge.limits import install_limits
from kronii.foundation.clock import ManualClock

from tests.unit.console.console_core_harness import BASE

Handler = Callable[[Mapping[str, Any], Any], Any]
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@dataclass
class FakeServices:
    """Routes (service, method, path) to a handler (params, body) -> JSON; `down` services do not
    answer; every call is kept."""

    routes: dict[tuple[str, str, str], Handler] = field(default_factory=dict)
    down: set[str] = field(default_factory=set)
    calls: list[tuple[str, str, str, dict[str, Any]]] = field(default_factory=list)

    def on(self, service: str, method: str, path: str, handler: Handler) -> None:
        self.routes[(service, method, path)] = handler

    async def _call(self, method: str, service: str, path: str, params: Any, body: Any) -> Any:
        query = {key: value for key, value in (params or {}).items() if value is not None}
        self.calls.append((service, method, path, query))
        if service in self.down:
            raise ServiceNotAnswering(service, "it cannot be reached (is `kronii up` running it?)")
        handler = self.routes.get((service, method, path))
        if handler is None:
            raise ServiceNotAnswering(service, "Not Found", status=404)
        return handler(query, body)

    async def get_json(self, service: str, path: str, params: Mapping[str, Any] | None = None) -> Any:
        return await self._call("GET", service, path, params, None)

    async def post_json(self, service: str, path: str, body: Any = None) -> Any:
        return await self._call("POST", service, path, None, body)

    async def delete_json(self, service: str, path: str, params: Mapping[str, Any] | None = None) -> Any:
        return await self._call("DELETE", service, path, params, None)


@dataclass
class Pages:
    app: FastAPI
    services: Any
    audit: list[dict[str, Any]]
    clock: ManualClock

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[httpx.AsyncClient]:
        """A client signed in through a real one-time link, for the `async with` block."""
        transport = httpx.ASGITransport(app=self.app)
        async with httpx.AsyncClient(transport=transport, base_url=BASE, follow_redirects=False) as client:
            link = (await client.post("/console/link", headers={"x-kronii-console": "link"})).json()["url"]
            assert (await client.get(link.removeprefix(BASE))).status_code == 303
            yield client


def csrf_of(page: str) -> str:
    found = CSRF.search(page)
    assert found, "the page carries no CSRF token"
    return found.group(1)


async def build_pages(
    services: ServiceClients, *, now: float = 1_796_569_200.0, timezone: str = "UTC"
) -> Pages:
    """now: 2026-12-06 15:00 UTC."""
    clock = ManualClock(now)
    audit: list[dict[str, Any]] = []

    async def record(**row: Any) -> None:
        audit.append(row)

    settings = ConsoleSettings(timezone=timezone)
    sign_in = SignIn(MemorySessions(), clock, record, link_secs=120, idle_secs=3600)
    console = ConsoleApp(clock=clock, settings=settings)
    console._sign_in = sign_in
    console._hub = LiveHub(["activity"])
    pages = [
        page for page in discovered_pages() if page.slug in ("captures", "decisions", "shell", "privacy")
    ]
    console._pages = pages
    deps = ConsoleDeps(settings=settings, clock=clock, services=services, record=record)
    states = {page.slug: await page.build(deps) for page in pages if page.build is not None}
    edge = EdgeState(
        sign_in=sign_in,
        record=record,
        nav=[NavEntry(page.slug, page.title) for page in pages],
        page_states=states,
    )
    app = FastAPI()
    for router in console.routers():
        app.include_router(router)
    install_limits(app, max_body=64 * 1024)
    app.add_middleware(ConsoleEdge, state=lambda: edge, max_body=64 * 1024)
    return Pages(app, services, audit, clock)
