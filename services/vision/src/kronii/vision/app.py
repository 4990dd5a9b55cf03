"""The vision engine as a service, its composition root: at start it builds the desktop's adapters
(AT-SPI tree, screen frames, capture's redacted frames and OCR), the planner, the safety policy, the
broker as its executor's hands, the confirmation notification, the local socket where a person
approves, the use cases (usecases/) and their one facade (VisionOperations) for the API and the bus;
the rules are in core/."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Iterable
from pathlib import Path

import grpc
from fastapi import APIRouter
from kronii.desktop.session import probe, wayland_refusal
from kronii.desktop.sway_ipc import sway_socket
from kronii.edge.local_door import LocalFrontDoor, PeerPolicy, PeerRegistry
from kronii.edge.polkit import PolkitClient
from kronii.edge.presence import PresenceGate
from kronii.foundation.audit_trail import AuditTrail
from kronii.foundation.clock import Clock, SystemClock
from kronii.foundation.errors import Unavailable
from kronii.llm.endpoint_probe import EndpointProbe
from kronii.runtime.rendezvous import local_socket_path
from kronii.runtime.service import DependencyStatus, ServiceContext
from kronii.stores import subjects
from kronii.vision.adapters.atspi import AtspiReader
from kronii.vision.adapters.broker_agent import BrokerAgent, broker_url
from kronii.vision.adapters.capture_frames import CaptureScreenshots, capture_socket, ensure_key
from kronii.vision.adapters.confirmation_notice import ConfirmationNotice
from kronii.vision.adapters.desktop import DesktopFrames, DesktopTree, screen_scale
from kronii.vision.adapters.launcher import AppLauncher
from kronii.vision.adapters.model_planner import make_planner
from kronii.vision.adapters.ocr import ScreenOcr
from kronii.vision.adapters.person_gate import APPROVE_PURPOSE, PersonGate
from kronii.vision.adapters.wl_desktop import LayoutTree, SwayDesktop
from kronii.vision.api.bus import confirmation_handler, focus_handler
from kronii.vision.api.grpc_api import VisionServicer
from kronii.vision.api.http_api import vision_router
from kronii.vision.core.actions import ActionClass
from kronii.vision.core.gate import Cadence
from kronii.vision.core.plan_book import PlanBook
from kronii.vision.core.safety import ClassPolicy, SafetyPolicy
from kronii.vision.metrics import VisionMetrics, zero_common_series
from kronii.vision.ports import Accessibility, PersonCheck
from kronii.vision.settings import VisionSettings
from kronii.vision.usecases.answer_confirmation import AnswerConfirmation
from kronii.vision.usecases.approve_plan import ApprovePlan
from kronii.vision.usecases.build_context import ContextBuilder
from kronii.vision.usecases.deny_plan import DenyPlan
from kronii.vision.usecases.execute_plan import Executor
from kronii.vision.usecases.make_plan import MakePlan
from kronii.vision.usecases.operations import VisionOperations
from kronii.vision.usecases.request_plan import RequestPlan
from kronii.vision.usecases.run_plan import RunPlan
from kronii.vision.usecases.watch_screen import ScreenWatch
from kronii.vision.v1 import vision_pb2 as pb
from kronii.vision.v1 import vision_pb2_grpc as pb_grpc

__all__ = ["SOCKET_NAME", "VisionApp", "safety_policy"]

log = logging.getLogger(__name__)

SOCKET_NAME = "vision.sock"


def safety_policy(settings: VisionSettings) -> SafetyPolicy:
    return SafetyPolicy(
        allowed_apps=frozenset(settings.apps()),
        classes={
            ActionClass.READ_ONLY: ClassPolicy(settings.read_only_policy),
            ActionClass.INPUT: ClassPolicy(settings.input_policy),
            ActionClass.LAUNCH: ClassPolicy(settings.launch_policy),
        },
        min_ocr_confidence=settings.min_ocr_confidence,
    )


class VisionApp:
    def __init__(self) -> None:
        self._operations: VisionOperations | None = None
        self._tree: DesktopTree | None = None
        self._frames: DesktopFrames | SwayDesktop | None = None
        # The tree the use cases read: the desktop's own, or on sway placed on its layout.
        self._placed: Accessibility | None = None
        self._scale = 1.0
        self._notice: ConfirmationNotice | None = None
        self._runs: RunPlan | None = None
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
        clock, audit = SystemClock(), ctx.record
        self.key_path = settings.key_file()
        ensure_key(self.key_path)
        self._tree = DesktopTree(AtspiReader())
        self._open_desktop(settings)
        builder = self._builder(settings, clock, metrics)
        book = PlanBook(
            ttl_ms=settings.plan_ttl_secs * 1000, on_end=lambda state: metrics.ends.labels(state).inc()
        )
        if settings.planner == "openai" and settings.llm_base_url:
            self._model = EndpointProbe(settings.llm_base_url)
            self._model.start()
        self._notice = ConfirmationNotice() if settings.notify else None
        peers = PeerRegistry()
        presence = (
            PresenceGate(ctx.redis, PolkitClient(), APPROVE_PURPOSE, window_secs=60, record=ctx.record)
            if ctx.redis is not None
            else None
        )
        operations, watch = self._use_cases(
            settings, clock, audit, metrics, book, builder, PersonGate(peers, presence)
        )
        if self._notice is not None:
            await self._notice.start(confirmation_handler(operations))
        self._tasks.append(asyncio.create_task(watch.run(), name="vision-watch"))
        with contextlib.suppress(Exception):
            await ctx.bus.subscribe(subjects.FOCUS_CHANGED, focus_handler(operations))
        self._operations = operations
        await self._open_front_door(ctx, settings, peers)

    def _open_desktop(self, settings: VisionSettings) -> None:
        """The screen the engine looks at: sway's (windows from its IPC, frames through wlr-screencopy,
        the tree placed on its layout) when the session is sway; else the X display's; on any other
        Wayland compositor, a refusal sentence every plan gets."""
        assert self._tree is not None
        display = settings.display or os.environ.get("DISPLAY")
        refusal = wayland_refusal("vision", display)
        facts = probe() if refusal is None and os.environ.get("WAYLAND_DISPLAY") else None
        ipc = sway_socket(os.environ)
        if facts is not None and facts.kind == "wayland" and facts.wayland_socket is not None and ipc:
            log.info("vision: on sway: windows from its IPC, frames through wlr-screencopy")
            self._frames = SwayDesktop(facts.wayland_socket, ipc)
            self._placed = LayoutTree(self._tree, self._frames)
            return
        if refusal is not None:
            log.warning("vision: %s; plans are refused", refusal)
        elif not display:
            log.warning(
                "vision: no X display (set DISPLAY or KRONII_VISION_DISPLAY); plans are refused until it has one"
            )
        self._frames = DesktopFrames(display, refusal)
        self._placed = self._tree
        self._scale = screen_scale()

    def _use_cases(
        self,
        settings: VisionSettings,
        clock: Clock,
        audit: AuditTrail,
        metrics: VisionMetrics,
        book: PlanBook,
        builder: ContextBuilder,
        people: PersonCheck,
    ) -> tuple[VisionOperations, ScreenWatch]:
        assert self._placed is not None and self.key_path is not None
        make = MakePlan(
            book, builder, make_planner(settings), safety_policy(settings), audit, clock,
            ask=self._notice.ask if self._notice is not None else None,
            tree_first=settings.planner == "rules",
            observe=lambda state: metrics.plans.labels(state).inc(),
            observe_rows=metrics.safety_rows,
        )  # fmt: skip
        executor = Executor(
            book, builder, self._placed, BrokerAgent(broker_url(settings), settings.client_id, self.key_path),
            AppLauncher(settings.apps()), audit, clock, replanner=make, lease_seconds=settings.lease_secs,
            observe=lambda kind, outcome: metrics.actions.labels(kind, outcome).inc(),
            observe_effect=metrics.effect,
        )  # fmt: skip
        self._runs = runs = RunPlan(book, executor, clock)
        approve, deny = ApprovePlan(book, builder, make, runs, audit, clock), DenyPlan(book, audit, clock)
        watch = ScreenWatch(
            book, builder, make, clock,
            Cadence(settings.tick_fastest_secs, settings.tick_slowest_secs, settings.tick_cpu_budget),
            observe=lambda decision: metrics.ticks.labels(decision).inc(),
        )  # fmt: skip
        operations = VisionOperations(
            book, builder, request=RequestPlan(make, runs), approve=approve, deny=deny, run=runs,
            answer=AnswerConfirmation(approve, deny), watch=watch, people=people,
        )  # fmt: skip
        return operations, watch

    def _builder(self, settings: VisionSettings, clock: Clock, metrics: VisionMetrics) -> ContextBuilder:
        assert self._placed is not None and self._frames is not None and self.key_path is not None
        if settings.use_capture:
            self._screenshots = CaptureScreenshots(
                capture_socket(settings), self.key_path, client_id=settings.client_id,
                display=settings.display, timeout_secs=settings.capture_timeout_secs,
            )  # fmt: skip
        return ContextBuilder(
            self._placed, self._frames, clock,
            screenshots=self._screenshots, ocr=ScreenOcr() if settings.use_capture else None,
            scale=self._scale, max_nodes=settings.max_context_nodes, max_depth=settings.max_tree_depth,
            observe=metrics.context_timings,
        )  # fmt: skip

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

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._runs is not None:
            await self._runs.drain()
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

    def operations(self) -> VisionOperations:
        if self._operations is None:
            raise Unavailable("the vision engine is starting")
        return self._operations

    def routers(self) -> Iterable[APIRouter]:
        return [vision_router(self.operations)]

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
