"""The vision engine as a service: at start it wires the desktop (AT-SPI tree, screen frames,
capture's redacted frames and OCR), the planner, the safety policy, the broker as its executor's
hands, the confirmation notification, the local socket where a person approves, and the screen watch;
the rules are in core/, the use cases in context_build, planning, execution and watch."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import grpc
from fastapi import APIRouter
from kronii.common import subjects
from kronii.common.errors import KroniiError, Unavailable
from kronii.common.llm.endpoint_probe import EndpointProbe
from kronii.common.local_door import LocalFrontDoor, PeerPolicy, PeerRegistry
from kronii.common.polkit import PolkitClient
from kronii.common.presence import PresenceGate
from kronii.common.rendezvous import local_socket_path
from kronii.common.service import DependencyStatus, ServiceContext
from kronii.vision.adapters.atspi import AtspiReader
from kronii.vision.adapters.broker_agent import BrokerAgent
from kronii.vision.adapters.capture_frames import CaptureScreenshots, ensure_key
from kronii.vision.adapters.confirmation_notice import ConfirmationNotice
from kronii.vision.adapters.desktop import DesktopFrames, DesktopTree
from kronii.vision.adapters.launcher import AppLauncher
from kronii.vision.adapters.ocr import ScreenOcr
from kronii.vision.adapters.person_gate import APPROVE_PURPOSE, PersonGate
from kronii.vision.api.grpc_api import VisionServicer
from kronii.vision.api.http_api import vision_router
from kronii.vision.context_build import ContextBuilder
from kronii.vision.core.gate import Cadence
from kronii.vision.desk import VisionDesk
from kronii.vision.execution import Executor
from kronii.vision.metrics import VisionMetrics, zero_common_series
from kronii.vision.plan_book import PlanBook
from kronii.vision.planning import Planning
from kronii.vision.ports import PersonCheck, VisionOperations
from kronii.vision.settings import VisionSettings
from kronii.vision.v1 import vision_pb2 as pb
from kronii.vision.v1 import vision_pb2_grpc as pb_grpc
from kronii.vision.watch import ScreenWatch
from kronii.vision.wiring import broker_url, capture_socket, make_planner, safety_policy, screen_scale

__all__ = ["SOCKET_NAME", "VisionApp"]

log = logging.getLogger(__name__)

SOCKET_NAME = "vision.sock"


class _Clock:
    def now_ms(self) -> int:
        return int(time.time() * 1000)

    def monotonic(self) -> float:
        return time.monotonic()


class _Audit:
    def __init__(self, ctx: ServiceContext) -> None:
        self._ctx = ctx

    async def record(
        self, action: str, subject: str, outcome: str, *, actor: str = "vision", **detail: Any
    ) -> None:
        await self._ctx.record(actor=actor, action=action, subject=subject, outcome=outcome, **detail)


class VisionApp:
    def __init__(self) -> None:
        self._desk: VisionDesk | None = None
        self._gate: PersonCheck | None = None
        self._tree: DesktopTree | None = None
        self._frames: DesktopFrames | None = None
        self._notice: ConfirmationNotice | None = None
        self._planning: Planning | None = None
        self._door: LocalFrontDoor | None = None
        self._screenshots: CaptureScreenshots | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self.key_path: Path | None = None
        # The model endpoint the planner calls (planner = "openai"), looked at in the background.
        self._model: EndpointProbe | None = None

    async def start(self, ctx: ServiceContext) -> None:
        settings = ctx.settings
        assert isinstance(settings, VisionSettings)
        metrics = VisionMetrics(ctx.registry)
        zero_common_series(ctx.metrics)
        clock, audit = _Clock(), _Audit(ctx)
        self.key_path = settings.key_file()
        ensure_key(self.key_path)
        self._tree = DesktopTree(AtspiReader())
        display = settings.display or os.environ.get("DISPLAY")
        if not display:
            log.warning(
                "vision: no X display (set DISPLAY or KRONII_VISION_DISPLAY); plans are refused until it has one"
            )
        self._frames = DesktopFrames(display)
        builder = self._builder(settings, clock, metrics)
        book = PlanBook(
            ttl_ms=settings.plan_ttl_secs * 1000, on_end=lambda state: metrics.ends.labels(state).inc()
        )
        executor = Executor(
            book, builder, self._tree, BrokerAgent(broker_url(settings), settings.client_id, self.key_path),
            AppLauncher(settings.apps()), audit, clock, lease_seconds=settings.lease_secs,
            observe=lambda kind, outcome: metrics.actions.labels(kind, outcome).inc(),
        )  # fmt: skip
        if settings.planner == "openai" and settings.llm_base_url:
            self._model = EndpointProbe(settings.llm_base_url)
            self._model.start()
        if settings.notify:
            self._notice = ConfirmationNotice(self._answered)
            await self._notice.start()
        planning = Planning(
            book, builder, make_planner(settings), safety_policy(settings), executor, audit, clock,
            ask=self._notice.ask if self._notice is not None else None,
            observe=lambda state: metrics.plans.labels(state).inc(),
            observe_rows=metrics.safety_rows,
        )  # fmt: skip
        self._planning = planning
        self._desk = VisionDesk(book, planning, builder)
        watch = ScreenWatch(
            book, builder, planning, clock,
            Cadence(settings.tick_fastest_secs, settings.tick_slowest_secs, settings.tick_cpu_budget),
            observe=lambda decision: metrics.ticks.labels(decision).inc(),
        )  # fmt: skip
        self._tasks.append(asyncio.create_task(watch.run(), name="vision-watch"))
        await self._follow_focus(ctx, watch)
        peers = PeerRegistry()
        presence = (
            PresenceGate(ctx.redis, PolkitClient(), APPROVE_PURPOSE, window_secs=60, record=ctx.record)
            if ctx.redis is not None
            else None
        )
        self._gate = PersonGate(peers, presence)
        await self._open_front_door(ctx, settings, peers)

    def _builder(self, settings: VisionSettings, clock: _Clock, metrics: VisionMetrics) -> ContextBuilder:
        assert self._tree is not None and self._frames is not None and self.key_path is not None
        if settings.use_capture:
            self._screenshots = CaptureScreenshots(
                capture_socket(settings), self.key_path, client_id=settings.client_id,
                display=settings.display, timeout_secs=settings.capture_timeout_secs,
            )  # fmt: skip
        return ContextBuilder(
            self._tree, self._frames, clock,
            screenshots=self._screenshots, ocr=ScreenOcr() if settings.use_capture else None,
            scale=screen_scale(), max_nodes=settings.max_tree_nodes, max_depth=settings.max_tree_depth,
            observe=metrics.context_timings,
        )  # fmt: skip

    async def _follow_focus(self, ctx: ServiceContext, watch: ScreenWatch) -> None:
        async def focused(_subject: str, _message: Any) -> None:
            watch.focus_changed()

        with contextlib.suppress(Exception):
            await ctx.bus.subscribe(subjects.FOCUS_CHANGED, focused)

    async def _open_front_door(
        self, ctx: ServiceContext, settings: VisionSettings, peers: PeerRegistry
    ) -> None:
        if not settings.http_port:
            log.warning(
                "vision: no fixed HTTP port, so no local socket: plans can be approved by notification only"
            )
            return
        door = LocalFrontDoor(
            local_socket_path(SOCKET_NAME, Path(settings.data_dir)), (settings.host, settings.http_port),
            PeerPolicy.build(), service="vision", peers=peers, record=ctx.record,
        )  # fmt: skip
        await door.start()
        self._door = door

    async def _answered(self, plan_id: str, key: str) -> None:
        """A click on the confirmation notification: the person's answer (only the server's signals count)."""
        if self._planning is None:
            return
        try:
            if key == "approve":
                await self._planning.approve(plan_id, "person:notification")
            elif key == "deny":
                await self._planning.deny(plan_id, "person:notification")
        except KroniiError as error:
            log.warning("vision: the person's %s of plan %s was not applied: %s", key, plan_id, error)

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._planning is not None:
            await self._planning.drain()
        for closer in (self._door, self._notice):
            if closer is not None:
                with contextlib.suppress(Exception):
                    await closer.stop()
        if self._screenshots is not None:
            await self._screenshots.close()
        if self._tree is not None:
            await self._tree.close()
        if self._frames is not None:
            self._frames.close()
        if self._model is not None:
            await self._model.stop()

    def _edge(self) -> tuple[VisionOperations, PersonCheck]:
        if self._desk is None or self._gate is None:
            raise Unavailable("the vision engine is starting")
        return self._desk, self._gate

    def operations(self) -> VisionOperations:
        return self._edge()[0]

    def routers(self) -> Iterable[APIRouter]:
        return [vision_router(self._edge)]

    def add_to_grpc(self, server: grpc.aio.Server) -> Iterable[str]:
        pb_grpc.add_VisionServicer_to_server(VisionServicer(self.operations), server)
        return [pb.DESCRIPTOR.services_by_name["Vision"].full_name]

    def readiness(self) -> dict[str, DependencyStatus]:
        tree, frames = self._tree, self._frames
        model = {"model": self._model.status()} if self._model is not None else {}
        return model | {
            "accessibility": DependencyStatus(
                tree is not None and (tree.connected or tree.problem == "not connected yet"),
                tree.problem if tree is not None else "starting",
                required=False,
            ),
            "display": DependencyStatus(
                frames is not None and not frames.problem,
                frames.problem if frames is not None else "",
                required=False,
            ),
        }
