"""The broker as a service, its composition root: at start it builds the adapters (journal, NATS
publisher, notification, the desktop: X display and viewers, the agents' registry and gatekeeper),
the use cases (usecases/: the control session, the input lane, the person's presence, the lease
clock) and the facade the API calls (BrokerOperations), opens the local socket for the desktop user,
and stops them all in turn. The rules are in core/."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Iterable
from pathlib import Path

import grpc
from fastapi import APIRouter
from kronii.broker.adapters.callers import GRANT_PURPOSE, AgentRegistry, TransportGate
from kronii.broker.adapters.desktop import Desktop
from kronii.broker.adapters.journal import JsonLinesJournal
from kronii.broker.adapters.lease_notice import LeaseNotice
from kronii.broker.adapters.publisher import NatsControlPublisher
from kronii.broker.adapters.stop_socket import StopSocket, StopSocketError
from kronii.broker.api.grpc_api import BrokerServicer
from kronii.broker.api.http_api import broker_router
from kronii.broker.metrics import BrokerMetrics, zero_common_series
from kronii.broker.ports import Gatekeeper
from kronii.broker.settings import BrokerSettings
from kronii.broker.usecases.control_session import ControlSession
from kronii.broker.usecases.operations import BrokerOperations
from kronii.broker.usecases.run_lease_clock import run_lease_clock
from kronii.broker.usecases.submit_input import InputLane
from kronii.broker.usecases.track_presence import Attachment
from kronii.broker.v1 import broker_pb2 as pb
from kronii.broker.v1 import broker_pb2_grpc as pb_grpc
from kronii.edge.access import AccessRules
from kronii.edge.local_door import LocalFrontDoor, PeerPolicy, PeerRegistry
from kronii.edge.polkit import PolkitClient
from kronii.edge.presence import PresenceGate
from kronii.foundation.clock import SystemClock
from kronii.foundation.errors import Unavailable
from kronii.runtime.rendezvous import broker_socket_path, broker_stop_socket_path
from kronii.runtime.service import DependencyStatus, ServiceContext

__all__ = ["BrokerApp"]

log = logging.getLogger(__name__)


class BrokerApp:
    # Agents prove themselves inside the call (their session token); sign-in is open to them.
    access_rules = AccessRules(
        self_authenticating=True,
        token_free_http=frozenset({"/v1/broker/agents/challenge", "/v1/broker/agents/sign-in"}),
        token_free_grpc=frozenset(
            {"/kronii.broker.v1.Broker/BeginSignIn", "/kronii.broker.v1.Broker/SignIn"}
        ),
    )

    def __init__(self) -> None:
        self._edge: tuple[BrokerOperations, Gatekeeper] | None = None
        self.control: ControlSession | None = None
        self.attachment: Attachment | None = None
        self._lane: InputLane | None = None
        self._desktop: Desktop | None = None
        self._notice: LeaseNotice | None = None
        self._journal: JsonLinesJournal | None = None
        self.front_door: LocalFrontDoor | None = None
        self.stop_door: StopSocket | None = None
        self._ticker: asyncio.Task[None] | None = None

    # ---- ServiceApp --------------------------------------------------------------------------

    async def start(self, ctx: ServiceContext) -> None:
        settings = ctx.settings
        assert isinstance(settings, BrokerSettings)
        if ctx.redis is None or ctx.sessions is None:
            raise RuntimeError("the broker needs Redis and PostgreSQL (agents' sign-in)")
        metrics = BrokerMetrics(ctx.registry)
        zero_common_series(ctx.metrics)
        self._journal = JsonLinesJournal(Path(settings.data_dir) / "broker" / "control.jsonl")
        self._journal.open()
        clock = SystemClock()
        control = ControlSession(
            session_id=uuid.uuid4().hex,
            policy=settings.policy(),
            metrics=metrics,
            publisher=NatsControlPublisher(ctx.bus),
            journal=self._journal,
            audit=ctx.record,
            clock=clock,
            interactive_reason="flag" if settings.interactive else "",
        )
        self.control = control
        attachment = Attachment(
            control,
            metrics,
            flag=settings.interactive,
            devices_make_interactive=settings.devices_make_interactive,
            clock=clock,
        )
        self.attachment = attachment
        if settings.notify:
            self._notice = LeaseNotice(attachment.notification_choice)
            if await self._notice.start():
                control.attach_notifier(self._notice)
        self._desktop = Desktop(settings, attachment, clock)
        await self._desktop.start()
        injector = self._desktop.injector_or_refusal()
        self._lane = InputLane(control, injector, metrics, size=settings.queue_size, clock=clock)
        self._lane.start()
        self._open_stop_door(settings, control, attachment)
        peers = PeerRegistry()
        presence = PresenceGate(ctx.redis, PolkitClient(), GRANT_PURPOSE, window_secs=60, record=ctx.record)
        registry = AgentRegistry(ctx.redis, ctx.sessions)
        gate = TransportGate(registry, peers, presence, mesh_token=settings.api_token)
        operations = BrokerOperations(
            control,
            self._lane,
            registry,
            default_lease_secs=settings.default_lease_secs,
            focused_window=self._desktop.focused_window,
            presence_problem=lambda: attachment.presence_problem,
        )
        self._edge = (operations, gate)
        await self._open_front_door(ctx, settings, peers)
        self._ticker = asyncio.create_task(run_lease_clock(control), name="broker-lease-clock")

    def _open_stop_door(
        self, settings: BrokerSettings, control: ControlSession, attachment: Attachment
    ) -> None:
        """STOP_NOW through a plain thread: the fence closed in that thread, the table told on the loop."""
        loop = asyncio.get_running_loop()

        def stop() -> int:
            control.fence.close("stop_now")
            return control.fence.closed_through

        def hand_over() -> None:
            loop.call_soon_threadsafe(attachment.stop_now, "person:stop-socket")

        door = StopSocket(broker_stop_socket_path(settings.data_dir), stop=stop, hand_over=hand_over)
        try:
            door.start()
        except (StopSocketError, OSError) as error:
            log.warning("broker: no stop socket (`kronii control stop` goes the slow way): %s", error)
            return
        self.stop_door = door

    async def _open_front_door(
        self, ctx: ServiceContext, settings: BrokerSettings, peers: PeerRegistry
    ) -> None:
        if not settings.http_port:
            log.warning("broker: no fixed HTTP port, so no local socket: grants cannot be made")
            return
        door = LocalFrontDoor(
            broker_socket_path(settings.data_dir),
            (settings.host, settings.http_port),
            PeerPolicy.build(),
            service="broker",
            peers=peers,
            record=ctx.record,
        )
        await door.start()
        self.front_door = door

    async def stop(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ticker
        if self._lane is not None:
            await self._lane.stop()
        if self.front_door is not None:
            with contextlib.suppress(Exception):
                await self.front_door.stop()
        if self.stop_door is not None:
            await asyncio.to_thread(self.stop_door.stop)
        if self._desktop is not None:
            await self._desktop.stop()
        if self._notice is not None:
            with contextlib.suppress(Exception):
                await self._notice.stop()
        if self.control is not None:
            await self.control.settle(1.0)
        if self._journal is not None:
            self._journal.close()

    def edge(self) -> tuple[BrokerOperations, Gatekeeper]:
        """The operations and the gatekeeper the API layers use; Unavailable until started."""
        if self._edge is None:
            raise Unavailable("the broker is starting")
        return self._edge

    def routers(self) -> Iterable[APIRouter]:
        return [broker_router(self.edge)]

    def add_to_grpc(self, server: grpc.aio.Server) -> Iterable[str]:
        pb_grpc.add_BrokerServicer_to_server(BrokerServicer(self.edge), server)
        return [pb.DESCRIPTOR.services_by_name["Broker"].full_name]

    def readiness(self) -> dict[str, DependencyStatus]:
        desktop = self._desktop
        if desktop is None:
            return {"display": DependencyStatus(False, "starting", required=False)}
        status = {
            "display": DependencyStatus(
                desktop.injector is not None,
                desktop.display_problem or desktop.input_path,
                required=False,
            ),
            "local_socket": DependencyStatus(
                self.front_door is not None,
                "listening" if self.front_door is not None else "not listening: grants cannot be made",
                required=False,
            ),
            "stop_socket": DependencyStatus(
                self.stop_door is not None,
                "listening" if self.stop_door is not None else "not listening: a STOP goes through HTTP",
                required=False,
            ),
        }
        if desktop.vnc_problem or desktop.vnc_port:
            status["remote_view"] = DependencyStatus(
                bool(desktop.vnc_port),
                desktop.vnc_problem or f"x11vnc on 127.0.0.1:{desktop.vnc_port}",
                required=False,
            )
        if desktop.remote is not None:
            # Not required: the broker works without seeing viewers; it refuses agents' acquire.
            problem = desktop.viewer_problem
            seen = f"{desktop.remote.viewer_count} viewer(s) attached"
            status["viewers"] = DependencyStatus(not problem, problem or seen, required=False)
        return status
