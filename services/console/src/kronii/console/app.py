"""The console's composition root: builds the session store, the sign-in, the live hub and the
ConsoleDeps, gives every discovered page its `build` once, and serves the pages' routers, the sign-in
routes, /events and /static behind the console's edge (api/security.py), which the runtime puts after
its same-uid check (`http_edge`) with the console's body limit (`http_max_body`)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable
from typing import Any

import grpc
from fastapi import APIRouter
from kronii.console.adapters.service_clients import HttpServiceClients
from kronii.console.adapters.sessions import MemorySessions, RedisSessions
from kronii.console.api.bus import LiveBus
from kronii.console.api.events import events_router
from kronii.console.api.pages import Page, discovered_pages
from kronii.console.api.rendering import STATIC_DIR
from kronii.console.api.security import ConsoleEdge, EdgeState, NavEntry
from kronii.console.api.sign_in import sign_in_router
from kronii.console.deps import ConsoleDeps
from kronii.console.metrics import LIVE_TOPICS, ConsoleMetrics, zero_common_series
from kronii.console.settings import ConsoleSettings
from kronii.console.usecases.live_updates import LiveHub
from kronii.console.usecases.sign_in import SignIn
from kronii.foundation.clock import Clock, SystemClock
from kronii.foundation.settings import load_settings
from kronii.runtime.service import DependencyStatus, ServiceContext
from nats.aio.subscription import Subscription
from starlette.staticfiles import StaticFiles

__all__ = ["ConsoleApp"]

log = logging.getLogger(__name__)


class ConsoleApp:
    def __init__(self, clock: Clock | None = None, settings: ConsoleSettings | None = None) -> None:
        self._clock = clock if clock is not None else SystemClock()
        self._settings = settings
        self._pages: list[Page] | None = None
        self._edge: EdgeState | None = None
        self._sign_in: SignIn | None = None
        self._hub: LiveHub | None = None
        self._clients: HttpServiceClients | None = None
        self._subscriptions: list[Subscription] = []
        self._unbuilt: list[str] = []

    # ---- what the runtime reads before the start ----------------------------------------------

    @property
    def settings(self) -> ConsoleSettings:
        if self._settings is None:
            self._settings = load_settings(ConsoleSettings)
        return self._settings

    @property
    def http_max_body(self) -> int:
        return self.settings.max_body_bytes

    @property
    def http_edge(self) -> list[tuple[type[Any], dict[str, Any]]]:
        return [(ConsoleEdge, {"state": lambda: self._edge, "max_body": self.http_max_body})]

    def pages(self) -> list[Page]:
        if self._pages is None:
            self._pages = discovered_pages()
        return self._pages

    # ---- ServiceApp --------------------------------------------------------------------------

    async def start(self, ctx: ServiceContext) -> None:
        settings = ctx.settings
        assert isinstance(settings, ConsoleSettings)
        self._settings = settings
        metrics = ConsoleMetrics(ctx.registry)
        zero_common_series(ctx.metrics)
        store = RedisSessions(ctx.redis, settings.key_prefix) if ctx.redis is not None else MemorySessions()
        sign_in = self._sign_in = SignIn(
            store,
            self._clock,
            ctx.record,
            link_secs=settings.login_link_secs,
            idle_secs=settings.session_idle_secs,
        )
        hub = self._hub = LiveHub(
            LIVE_TOPICS, on_count=metrics.live_clients.set, on_drop=metrics.live_dropped.inc
        )
        await self._subscribe(ctx, hub)
        clients = self._clients = HttpServiceClients(
            settings.service_urls, api_token=settings.api_token, timeout_secs=settings.service_timeout_secs
        )
        deps = ConsoleDeps(
            settings=settings, clock=self._clock, services=clients, record=ctx.record,
            bus=ctx.bus, redis=ctx.redis, engine=ctx.engine,
        )  # fmt: skip
        self._edge = EdgeState(
            sign_in=sign_in,
            record=ctx.record,
            nav=[NavEntry(page.slug, page.title) for page in self.pages()],
            page_states=await self._build_pages(deps),
            on_refusal=lambda reason: metrics.refusals.labels(reason).inc(),
        )

    async def _subscribe(self, ctx: ServiceContext, hub: LiveHub) -> None:
        bus = LiveBus(hub)
        for topic, subjects in LIVE_TOPICS.items():
            for subject in subjects:
                self._subscriptions.append(await ctx.bus.subscribe(subject, bus.handler(topic)))

    async def _build_pages(self, deps: ConsoleDeps) -> dict[str, Any]:
        """Each page's use cases, made once; a page whose build fails is shown as unavailable, not fatal."""
        states: dict[str, Any] = {}
        for page in self.pages():
            if page.build is None:
                continue
            try:
                states[page.slug] = await page.build(deps)
            except Exception:
                log.exception("the console page %s could not be built", page.slug)
                self._unbuilt.append(page.slug)
        return states

    async def stop(self) -> None:
        self._edge = None
        for subscription in self._subscriptions:
            with contextlib.suppress(Exception):
                await subscription.unsubscribe()
        self._subscriptions.clear()
        if self._clients is not None:
            await self._clients.close()

    def routers(self) -> Iterable[APIRouter]:
        shared = APIRouter()
        shared.include_router(sign_in_router(self._signing_in))
        shared.include_router(events_router(self._live))
        shared.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
        return [shared, *(page.router for page in self.pages())]

    def add_to_grpc(self, server: grpc.aio.Server) -> Iterable[str]:
        return []

    def readiness(self) -> dict[str, DependencyStatus]:
        if self._edge is None:
            return {"pages": DependencyStatus(False, "the console has not started")}
        detail = f"{len(self.pages())} pages"
        if self._unbuilt:
            detail += f"; not built: {', '.join(self._unbuilt)}"
        return {"pages": DependencyStatus(not self._unbuilt, detail, required=False)}

    # ---- what the routes reach after the start ------------------------------------------------

    def _signing_in(self) -> SignIn:
        if self._sign_in is None:
            raise RuntimeError("the console has not started")
        return self._sign_in

    def _live(self) -> LiveHub:
        if self._hub is None:
            raise RuntimeError("the console has not started")
        return self._hub
