"""The supervisor as a service (the ServiceApp its spec names): it builds the adapters and the use
cases, starts the background loops, and answers the API layers (ports.SupervisorOperations).

Where things are: triggers.py (trigger_runtime, force, unblock, the queue), lifecycle.py (one
trigger through the core's table), outcomes.py (how a trigger ends), relaunch.py (resume and spawn),
acks.py, runtimes.py (the registry's calls, spawn, logs), reconcile.py (the registry kept true),
access.py (tokens and scopes). Every public method takes a protobuf request and the caller's
verified claims and returns a protobuf answer; the HTTP router and the gRPC servicer only translate
(api/)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterable
from typing import Any

import grpc
from fastapi import APIRouter
from kronii.common import subjects
from kronii.common.access import AccessRules
from kronii.common.service import DependencyStatus, ServiceContext
from kronii.supervisor.adapters.bus_events import BusEvents
from kronii.supervisor.adapters.launcher import VisibleLauncher
from kronii.supervisor.adapters.panes import PaneDriver
from kronii.supervisor.adapters.registry import Registry
from kronii.supervisor.adapters.sessions import find_session_id
from kronii.supervisor.adapters.state import SupervisorState
from kronii.supervisor.adapters.tmux import CONTROL_SESSION, TmuxControl, pid_alive
from kronii.supervisor.adapters.token_key import load_or_create_secret
from kronii.supervisor.adapters.trigger_records import TriggerRecords
from kronii.supervisor.adapters.trigger_rows import TriggerRows
from kronii.supervisor.api.grpc_api import SupervisorServicer
from kronii.supervisor.api.http_api import supervisor_router
from kronii.supervisor.core.tokens import Claims
from kronii.supervisor.metrics import SupervisorMetrics, zero_common_series
from kronii.supervisor.settings import SupervisorSettings
from kronii.supervisor.usecases.access import Access
from kronii.supervisor.usecases.acknowledge import AckBoard
from kronii.supervisor.usecases.desktop_watch import DesktopWatch
from kronii.supervisor.usecases.manage_runtimes import RuntimeDesk
from kronii.supervisor.usecases.reconcile_registry import Reconciler
from kronii.supervisor.usecases.relaunch_agent import Relauncher
from kronii.supervisor.usecases.trigger_agent import TriggerDesk
from kronii.supervisor.usecases.trigger_lifecycle import TriggerLifecycle
from kronii.supervisor.usecases.trigger_outcomes import Outcomes
from kronii.supervisor.v1 import supervisor_pb2 as pb
from kronii.supervisor.v1 import supervisor_pb2_grpc as pb_grpc

__all__ = ["SupervisorApp", "SystemClock"]

log = logging.getLogger(__name__)


class SystemClock:
    """The wall clock for records; for durations, the monotonic clock anchored to the wall clock
    once, when the process starts (ports.Clock)."""

    def __init__(self) -> None:
        self._anchor = time.time() - time.monotonic()

    def time(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return self._anchor + time.monotonic()


class _Parts:
    """The use cases and the adapters they were built on, for one run of the service."""

    def __init__(self, ctx: ServiceContext, settings: SupervisorSettings, clock: SystemClock) -> None:
        assert ctx.redis is not None and ctx.engine is not None
        self._settings, self._clock = settings, clock
        self._params, self._kinds = settings.params(), settings.kinds()
        self.metrics = SupervisorMetrics(ctx.registry)
        self.tmux = TmuxControl(settings.tmux_socket, settings.tmux_binary)
        self.registry = Registry(ctx.engine)
        self.state = SupervisorState(ctx.redis)
        self.records = TriggerRecords(ctx, ctx.redis)
        self.trigger_rows = TriggerRows(ctx.engine)
        self.access = Access(load_or_create_secret(settings), settings, clock)
        self.acks = AckBoard(self.registry, self.state)
        self._panes = PaneDriver(self.tmux)
        self._audit = _Audit(ctx)
        self.desktop = DesktopWatch(settings.desktop_session)
        # The agent state last read off each runtime's screen (the trigger path and reconcile write it).
        self._agent_states: dict[str, str] = {}
        self.triggers = self._trigger_desk(ctx)
        self.runtimes = RuntimeDesk(
            registry=self.registry,
            terminal=self.tmux,
            state=self.state,
            acks=self.acks,
            access=self.access,
            audit=self._audit,
            settings=settings,
            kinds=self._kinds,
            agent_states=self._agent_states,
            clock=clock,
        )
        self.reconciler = Reconciler(
            registry=self.registry,
            state=self.state,
            panes=self._panes,
            terminal=self.tmux,
            audit=self._audit,
            metrics=self.metrics,
            params=self._params,
            kinds=self._kinds,
            heartbeat_ttl_secs=settings.heartbeat_ttl_secs,
            agent_states=self._agent_states,
            pid_alive=pid_alive,
            find_session=find_session_id,
            clock=clock,
        )

    def _trigger_desk(self, ctx: ServiceContext) -> TriggerDesk:
        return TriggerDesk(
            lifecycle=self._lifecycle(ctx),
            state=self.state,
            trigger_log=self.trigger_rows,
            audit=self._audit,
            metrics=self.metrics,
            params=self._params,
            dedupe_ttl_secs=self._settings.dedupe_ttl_secs,
            store_down=lambda: ctx.postgres_down_since is not None,
            clock=self._clock,
        )

    def _lifecycle(self, ctx: ServiceContext) -> TriggerLifecycle:
        outcomes = Outcomes(
            state=self.state,
            records=self.records,
            trigger_log=self.trigger_rows,
            events=BusEvents(ctx),
            audit=self._audit,
            metrics=self.metrics,
            params=self._params,
            dedupe_ttl_secs=self._settings.dedupe_ttl_secs,
            clock=self._clock,
        )
        return TriggerLifecycle(
            registry=self.registry,
            state=self.state,
            panes=self._panes,
            acks=self.acks,
            outcomes=outcomes,
            relauncher=self._relauncher(),
            trigger_log=self.trigger_rows,
            metrics=self.metrics,
            params=self._params,
            kinds=self._kinds,
            agent_states=self._agent_states,
            pid_alive=pid_alive,
            clock=self._clock,
            desktop_hold=self.desktop.hold,
        )

    def _relauncher(self) -> Relauncher:
        return Relauncher(
            launcher=VisibleLauncher(self.tmux),
            registry=self.registry,
            state=self.state,
            trigger_log=self.trigger_rows,
            find_session=find_session_id,
            runtime_env=self.access.runtime_env,
            metrics=self.metrics,
            params=self._params,
            session_prefix=self._settings.session_prefix,
            status_dir=self._settings.data_dir / "supervisor" / "exits",
            clock=self._clock,
        )


class _Audit:
    """Before the answer: committed, or waiting in the audit outbox (Redis) while PostgreSQL is away."""

    def __init__(self, ctx: ServiceContext) -> None:
        self._ctx = ctx

    async def __call__(self, actor: str, action: str, subject: str, outcome: str, **detail: Any) -> None:
        await self._ctx.record(actor=actor, action=action, subject=subject, outcome=outcome, **detail)


class SupervisorApp:
    # Every route verifies a signed service token itself (scopes and workspaces).
    access_rules = AccessRules(self_authenticating=True)

    def __init__(self) -> None:
        self._parts: _Parts | None = None
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def parts(self) -> _Parts:
        assert self._parts is not None, "the supervisor has not started"
        return self._parts

    # ---- ServiceApp --------------------------------------------------------------------------------

    async def start(self, ctx: ServiceContext) -> None:
        settings = ctx.settings
        assert isinstance(settings, SupervisorSettings)
        if ctx.redis is None or ctx.engine is None:
            raise RuntimeError("the supervisor needs Redis and PostgreSQL")
        parts = self._parts = _Parts(ctx, settings, SystemClock())
        zero_common_series(ctx.metrics)
        await parts.registry.load()
        recovered = await parts.triggers.recover_written()
        if recovered:
            log.info(
                "%d trigger(s) were being typed when the supervisor stopped; looking at their panes",
                recovered,
            )
        if ctx.bus.connected:
            await ctx.bus.subscribe(subjects.SUPERVISOR_ACK, parts.acks.on_bus_ack)
            await ctx.bus.subscribe(subjects.BROKER_CONTROL, parts.desktop.on_control)
        for name, coro in (
            ("supervisor-queue", parts.triggers.queue_loop()),
            ("supervisor-reconcile", parts.reconciler.reconcile_forever(settings.reconcile_interval_secs)),
            ("supervisor-writer", parts.trigger_rows.write_forever()),
            ("supervisor-outbox", parts.records.drain_forever()),
        ):
            self._tasks.append(asyncio.create_task(coro, name=name))

    async def stop(self) -> None:
        inflight = list(self._parts.triggers.inflight.values()) if self._parts else []
        for task in [*self._tasks, *inflight]:
            task.cancel()
        for task in [*self._tasks, *inflight]:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        if self._parts is None:
            return
        await self._parts.trigger_rows.drain()
        tmux = self._parts.tmux
        with contextlib.suppress(Exception):
            if tmux.connected:
                await tmux.command("kill-session", "-t", f"={CONTROL_SESSION}")
        await tmux.close()

    def routers(self) -> Iterable[APIRouter]:
        return [supervisor_router(self)]

    def add_to_grpc(self, server: grpc.aio.Server) -> Iterable[str]:
        pb_grpc.add_SupervisorServiceServicer_to_server(SupervisorServicer(self), server)
        return [pb.DESCRIPTOR.services_by_name["SupervisorService"].full_name]

    def readiness(self) -> dict[str, DependencyStatus]:
        tmux = self._parts.tmux if self._parts else None
        if tmux is not None and tmux.connected:
            status = DependencyStatus(
                True, f"control connection on {tmux.socket or 'the default server'}", False
            )
        else:
            problem = self._parts.reconciler.tmux_problem if self._parts else ""
            status = DependencyStatus(True, problem or "connects on first use", required=False)
        return {"tmux": status}

    # ---- ports.SupervisorOperations: what the API layers call ---------------------------------------

    def authenticate(self, token: str | None) -> Claims:
        return self.parts.access.authenticate(token)

    def identity_proof(self, nonce: str) -> str:
        return self.parts.access.identity_proof(nonce)

    async def register(self, req: pb.RegisterRuntimeRequest, claims: Claims) -> pb.RegisterRuntimeResponse:
        return await self.parts.runtimes.register(req, claims)

    async def heartbeat(self, req: pb.HeartbeatRuntimeRequest, claims: Claims) -> pb.Runtime:
        return await self.parts.runtimes.heartbeat(req, claims)

    async def deregister(self, req: pb.DeregisterRuntimeRequest, claims: Claims) -> pb.Runtime:
        return await self.parts.runtimes.deregister(req, claims)

    async def list_runtimes(self, req: pb.ListRuntimesRequest, claims: Claims) -> pb.ListRuntimesResponse:
        return await self.parts.runtimes.list_runtimes(req, claims)

    async def get_runtime(self, req: pb.GetRuntimeRequest, claims: Claims) -> pb.Runtime:
        return await self.parts.runtimes.get_runtime(req, claims)

    async def set_paused(self, req: pb.SetRuntimePausedRequest, claims: Claims) -> pb.Runtime:
        return await self.parts.runtimes.set_paused(req, claims)

    async def logs(self, req: pb.RuntimeLogsRequest, claims: Claims) -> pb.RuntimeLogsResponse:
        return await self.parts.runtimes.logs(req, claims)

    async def spawn(self, req: pb.SpawnRuntimeRequest, claims: Claims) -> pb.SpawnRuntimeResponse:
        return await self.parts.runtimes.spawn(req, claims)

    async def ack(self, req: pb.AckTriggerRequest, claims: Claims | None) -> pb.AckTriggerResponse:
        return await self.parts.acks.ack(req, claims)

    async def trigger(
        self, req: pb.TriggerRuntimeRequest, claims: Claims, request_id: str = ""
    ) -> pb.TriggerOutcome:
        return await self.parts.triggers.trigger(req, claims, request_id)

    async def get_trigger(self, req: pb.GetTriggerRequest, claims: Claims) -> pb.TriggerOutcome:
        return await self.parts.triggers.get_trigger(req, claims)

    async def force(self, req: pb.ForceTriggerRequest, claims: Claims) -> pb.TriggerOutcome:
        return await self.parts.triggers.force(req, claims)

    async def unblock(self, req: pb.UnblockThreadRequest, claims: Claims) -> pb.UnblockThreadResponse:
        return await self.parts.triggers.unblock(req, claims)
