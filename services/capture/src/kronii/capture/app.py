"""The capture service as its spec names it (a ServiceApp): the composition root.

It builds the adapters, the use cases (usecases/), the one front the API calls
(usecases.operations.CaptureOperations), the API servers (api/) and the NATS subscriptions
(api.bus), and starts and stops them; every decision lives in the use cases and the core.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Iterable

import grpc
from fastapi import APIRouter
from kronii.capture.adapters.burst_work import BurstWorker, Redactor
from kronii.capture.adapters.callers import client_sessions, front_door, identity_for_peer, presence_gate
from kronii.capture.adapters.frames import FrameGrabber
from kronii.capture.adapters.gnome_frames import GnomeFrames
from kronii.capture.adapters.jobs import JobStore
from kronii.capture.adapters.kde_frames import KdeFrames
from kronii.capture.adapters.log_paths import install_path_scrubber
from kronii.capture.adapters.master_key import master_key_choice
from kronii.capture.adapters.sensor_snapshot import SnapshotReader
from kronii.capture.adapters.status_bus import StatusPublisher
from kronii.capture.adapters.text_density import ocr_text_density
from kronii.capture.adapters.tokens import TokenBook
from kronii.capture.adapters.vault import ObjectVault
from kronii.capture.adapters.vault_shelf import VaultShelf
from kronii.capture.adapters.wayland_frames import WaylandFrames
from kronii.capture.api.bus import DesktopEvents
from kronii.capture.api.convert import sensor_snapshot
from kronii.capture.api.grpc_api import CaptureServicer
from kronii.capture.api.http_api import capture_router
from kronii.capture.api.http_person import shelf_router
from kronii.capture.core.bypass import MatchParams
from kronii.capture.core.retention import keep_raw
from kronii.capture.metrics import CaptureMetrics, zero_common_series
from kronii.capture.ports import CaptureUnavailable, FrameSource
from kronii.capture.settings import CaptureSettings
from kronii.capture.usecases.follow_desktop import DesktopView, FollowDesktop
from kronii.capture.usecases.guard_access import Guard, breaker_for
from kronii.capture.usecases.operations import CaptureOperations
from kronii.capture.usecases.person_shelf import PersonShelf, Retention
from kronii.capture.usecases.request_capture import RequestCapture, rate_limits
from kronii.capture.usecases.run_capture import RunCapture
from kronii.capture.usecases.schedule_jobs import JobScheduler
from kronii.capture.usecases.serve_screenshots import ScreenshotDesk
from kronii.capture.usecases.track_jobs import JobBoard
from kronii.capture.v1 import capture_pb2 as pb
from kronii.capture.v1 import capture_pb2_grpc as pb_grpc
from kronii.desktop.session import SessionFacts, capability, probe, session_bus_address
from kronii.desktop.sway_ipc import sway_socket
from kronii.edge.access import AccessRules
from kronii.edge.local_door import FrontDoorError, LocalFrontDoor, PeerPolicy
from kronii.edge.polkit import PolkitClient
from kronii.foundation.clock import Clock, SystemClock
from kronii.foundation.errors import Unavailable
from kronii.runtime.rendezvous import capture_socket_path
from kronii.runtime.service import DependencyStatus, ServiceContext
from nats.aio.subscription import Subscription

__all__ = ["CaptureApp"]

log = logging.getLogger(__name__)


class CaptureApp:
    # Every private route checks an agent session itself; agents sign in through the handshake.
    access_rules = AccessRules(
        self_authenticating=True,
        token_free_http=frozenset({"/v1/capture/challenge", "/v1/capture/authenticate"}),
        token_free_grpc=frozenset(
            {
                "/kronii.capture.v1.ScreenCapture/BeginChallenge",
                "/kronii.capture.v1.ScreenCapture/Authenticate",
            }
        ),
    )

    def __init__(self, clock: Clock | None = None) -> None:
        self.view = DesktopView()
        self.front_door: LocalFrontDoor | None = None
        self._clock: Clock = clock or SystemClock()
        self._operations: CaptureOperations | None = None
        self._shelf: PersonShelf | None = None
        self._board: JobBoard | None = None
        self._subscriptions: list[Subscription] = []
        self._grabber: FrameSource | None = None
        self._display_problem = ""
        self._tasks: list[asyncio.Task[None]] = []

    # ---- ServiceApp --------------------------------------------------------------------------

    async def start(self, ctx: ServiceContext) -> None:
        settings = ctx.settings
        assert isinstance(settings, CaptureSettings)
        install_path_scrubber()
        if ctx.redis is None or ctx.sessions is None:
            raise RuntimeError("the capture service needs Redis and PostgreSQL")
        metrics = CaptureMetrics(ctx)
        zero_common_series(ctx.metrics)
        vault = await self._open_vault(ctx, settings)
        self._grabber = await self._open_display(settings.display)
        desktop = FollowDesktop(self.view, SnapshotReader(ctx.redis, sensor_snapshot))
        jobs = JobStore(ctx.redis, ctx.sessions)
        board = JobBoard(jobs, StatusPublisher(ctx.bus), metrics, ctx.record, self.view, self._clock)
        self._board = board
        screenshots = ScreenshotDesk(
            vault, TokenBook(ctx.redis, settings.token_ttl_secs), settings, metrics, ctx.record, self._clock
        )
        display_problem = None if self._grabber is not None else self._display_problem
        intake = RequestCapture(
            board, jobs, settings, metrics, self.view, self._clock, display_problem=display_problem
        )
        operations = CaptureOperations(
            self._guard(ctx, settings, metrics), intake, board, screenshots, desktop
        )
        await desktop.refresh_snapshot()
        self._subscriptions = await DesktopEvents(operations).subscribe(ctx.bus)
        await board.settle_leftovers()
        self._operations = operations
        self._shelf = PersonShelf(
            VaultShelf(vault, settings.store_dir, ctx.sessions),
            Retention(settings.raw_days, settings.redacted_days),
            ctx.record,
        )
        if settings.grpc_port:
            await self._open_front_door(ctx, settings, metrics)
        scheduler = JobScheduler(
            board,
            self._capture_run(board, vault, settings, metrics),
            self.view,
            desktop,
            self._clock,
            limits=rate_limits(settings),
            match=MatchParams(app_restart_tolerance_ms=settings.app_restart_tolerance_ms),
            interval_ms=settings.matcher_interval_ms,
        )
        self._tasks.append(asyncio.create_task(scheduler.loop(), name="capture-schedule"))
        self._tasks.append(asyncio.create_task(screenshots.purge_loop(), name="capture-purge"))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        if self._board is not None:
            await self._board.stop()
        if self.front_door is not None:
            with contextlib.suppress(Exception):
                await self.front_door.stop()
        for subscription in self._subscriptions:
            try:
                await subscription.unsubscribe()
            except Exception as error:  # the bus may already be gone at shutdown
                log.debug("unsubscribe failed: %s", error)
        self._subscriptions.clear()

    def routers(self) -> Iterable[APIRouter]:
        return [capture_router(self.operations), shelf_router(self.shelf)]

    def add_to_grpc(self, server: grpc.aio.Server) -> Iterable[str]:
        pb_grpc.add_ScreenCaptureServicer_to_server(CaptureServicer(self.operations()), server)
        return [pb.DESCRIPTOR.services_by_name["ScreenCapture"].full_name]

    def readiness(self) -> dict[str, DependencyStatus]:
        if self._grabber is None:
            display = DependencyStatus(False, self._display_problem, required=False)
        else:
            display = DependencyStatus(True, self._grabber.display, required=False)
        socket_ok = self.front_door is not None
        return {
            "display": display,
            "local_socket": DependencyStatus(
                socket_ok, "listening" if socket_ok else "not listening", required=False
            ),
            "sensor": DependencyStatus(
                self.view.snapshot_seen,
                "snapshot seen" if self.view.snapshot_seen else "no sensor snapshot yet",
                required=False,
            ),
        }

    @property
    def display_available(self) -> bool:
        return self._grabber is not None

    def operations(self) -> CaptureOperations:
        """The operations the API layers call; Unavailable until the service has started."""
        if self._operations is None:
            raise Unavailable("the capture service is starting")
        return self._operations

    def shelf(self) -> PersonShelf:
        """The person's view of the stored screenshots; Unavailable until the service has started."""
        if self._shelf is None:
            raise Unavailable("the capture service is starting")
        return self._shelf

    # ---- wiring ------------------------------------------------------------------------------

    async def _open_vault(self, ctx: ServiceContext, settings: CaptureSettings) -> ObjectVault:
        assert ctx.sessions is not None
        # Never a prompt, every Secret Service call within its timeout: a keyring that would wait on a
        # person means the key file, said in one line (which store, and how to move the key later).
        choice = await asyncio.to_thread(
            master_key_choice,
            data_dir=settings.data_dir,
            vault_url=settings.vault_url,
            vault_token=settings.vault_token,
            vault_key_name=settings.vault_key_name,
            use_secret_service=settings.use_secret_service,
            secret_service_timeout_s=settings.secret_service_timeout_secs,
        )
        log.log(logging.WARNING if choice.fallback else logging.INFO, "%s", choice.line)
        return ObjectVault(
            settings.store_dir,
            ctx.sessions,
            choice.provider,
            store_raw=keep_raw(settings.raw_days),
            record=ctx.record,
        )

    def _guard(self, ctx: ServiceContext, settings: CaptureSettings, metrics: CaptureMetrics) -> Guard:
        assert ctx.redis is not None and ctx.sessions is not None
        return Guard(
            settings=settings,
            clients=client_sessions(ctx.redis, ctx.sessions, session_ttl_secs=settings.session_ttl_secs),
            presence=presence_gate(
                ctx.redis,
                PolkitClient(timeout_s=settings.polkit_timeout_secs),
                window_secs=settings.human_window_secs,
                record=ctx.record,
            ),
            peers=identity_for_peer,
            breaker=breaker_for(settings),
            metrics=metrics,
            record=ctx.record,
            clock=self._clock,
        )

    def _capture_run(
        self, board: JobBoard, vault: ObjectVault, settings: CaptureSettings, metrics: CaptureMetrics
    ) -> RunCapture:
        return RunCapture(
            board,
            self._grabber,
            BurstWorker(Redactor(settings.max_masked_area), ocr_text_density),
            vault,
            settings,
            metrics,
            self._clock,
            display_problem=self._display_problem,
        )

    async def _open_display(self, name: str | None) -> FrameSource | None:
        """The session's screen: a wlroots compositor through wlr-screencopy when WAYLAND_DISPLAY answers
        (DISPLAY is then XWayland's, whose root shows none of the person's Wayland windows), else the
        X display, else none and why."""
        env = dict(os.environ)
        if name:
            env["DISPLAY"] = name
        facts = await asyncio.to_thread(probe, env)
        if facts.kind == "wayland":
            return await self._open_wayland(facts, env)
        if not name:
            self._no_display("no display: DISPLAY is not set")
            return None
        return await self._checked(FrameGrabber(name))

    async def _open_wayland(self, facts: SessionFacts, env: dict[str, str]) -> FrameSource | None:
        frames = capability(facts, "capture", "frames")
        if not frames.ok or facts.wayland_socket is None:
            self._no_display(frames.detail)
            return None
        if facts.family == "gnome":
            source = await self._checked(GnomeFrames(session_bus_address(env) or "", env))
        elif facts.family == "kde":
            source = await self._checked(KdeFrames(session_bus_address(env) or "", env))
        else:
            ipc = sway_socket(env) if facts.name == "sway" else None
            source = await self._checked(WaylandFrames(facts.wayland_socket, facts.name, ipc=ipc))
        if source is not None:
            log.info("%s", frames.detail)
        return source

    async def _checked(self, source: FrameSource) -> FrameSource | None:
        try:
            await asyncio.to_thread(source.check)
        except CaptureUnavailable as error:
            self._no_display(f"no display: {error}")
            return None
        return source

    def _no_display(self, why: str) -> None:
        self._display_problem = f"{why}; capture requests are refused"
        log.warning("%s", self._display_problem)

    async def _open_front_door(
        self, ctx: ServiceContext, settings: CaptureSettings, metrics: CaptureMetrics
    ) -> None:
        self.front_door = front_door(
            capture_socket_path(settings.data_dir, settings.socket_dir),
            (settings.host, settings.grpc_port),
            PeerPolicy.build(settings.allowed_uids, settings.allowed_exes),
            record=ctx.record,
            on_refused=lambda reason: metrics.socket_refused.labels(reason).inc(),
        )
        try:
            await self.front_door.start()
        except (FrontDoorError, OSError) as error:
            # Agents can still come in over gRPC with a session; local clients cannot.
            log.error("the local socket is not available: %s", error)
            self.front_door = None
