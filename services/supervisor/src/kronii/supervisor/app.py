"""The supervisor as a service (the ServiceApp its spec names), and nothing more: the composition
root. It builds the adapters, the use cases on them (usecases/), the facade the API calls
(usecases/operations.py SupervisorOperations), the HTTP router, the gRPC servicer and the bus
handlers (api/), and starts and stops the background loops."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine, Iterable
from typing import Any

import grpc
from fastapi import APIRouter
from kronii.edge.access import AccessRules
from kronii.foundation.clock import SystemClock
from kronii.foundation.errors import Unavailable
from kronii.runtime.service import DependencyStatus, ServiceContext
from kronii.supervisor.adapters.agent_histories import AgentHistories
from kronii.supervisor.adapters.agent_worlds import AgentWorlds
from kronii.supervisor.adapters.bus_events import BusEvents
from kronii.supervisor.adapters.launcher import VisibleLauncher
from kronii.supervisor.adapters.notices import PipelineNotices
from kronii.supervisor.adapters.offer_store import OfferStore
from kronii.supervisor.adapters.panes import PaneDriver
from kronii.supervisor.adapters.processes import pid_alive
from kronii.supervisor.adapters.registry import Registry
from kronii.supervisor.adapters.sessions import find_session_id
from kronii.supervisor.adapters.state import SupervisorState
from kronii.supervisor.adapters.thread_store import ThreadStore
from kronii.supervisor.adapters.tmux import TmuxControl
from kronii.supervisor.adapters.tmux_connection import CONTROL_SESSION
from kronii.supervisor.adapters.token_key import load_or_create_secret
from kronii.supervisor.adapters.trigger_records import TriggerRecords
from kronii.supervisor.adapters.trigger_rows import TriggerRows
from kronii.supervisor.api.bus import SupervisorBus
from kronii.supervisor.api.grpc_api import SupervisorServicer
from kronii.supervisor.api.http_api import supervisor_router
from kronii.supervisor.core.agent_states import AgentStates
from kronii.supervisor.core.threads import ThreadView
from kronii.supervisor.core.trigger import Collision, TriggerOutcome
from kronii.supervisor.metrics import SupervisorMetrics, zero_common_series
from kronii.supervisor.settings import SupervisorSettings
from kronii.supervisor.usecases.access import Access
from kronii.supervisor.usecases.acknowledge import AckBoard
from kronii.supervisor.usecases.desktop_watch import DesktopWatch
from kronii.supervisor.usecases.manage_runtimes import ManageRuntimes
from kronii.supervisor.usecases.offers import OfferDesk
from kronii.supervisor.usecases.operate_triggers import OperateTriggers
from kronii.supervisor.usecases.operations import SupervisorOperations
from kronii.supervisor.usecases.orchestrate import Orchestrator
from kronii.supervisor.usecases.reconcile_registry import Reconciler
from kronii.supervisor.usecases.relaunch_agent import Relauncher
from kronii.supervisor.usecases.threads import ThreadDesk
from kronii.supervisor.usecases.trigger_agent import TriggerAgent
from kronii.supervisor.usecases.trigger_lifecycle import TriggerLifecycle
from kronii.supervisor.usecases.trigger_outcomes import Outcomes
from kronii.supervisor.usecases.trigger_parts import AgentSide, TriggerBooks
from kronii.supervisor.v1 import supervisor_pb2 as pb
from kronii.supervisor.v1 import supervisor_pb2_grpc as pb_grpc

__all__ = ["SupervisorApp"]

log = logging.getLogger(__name__)


class OutcomeEvents:
    """The outcome events on the bus, and the same outcomes to the listeners in this process (the
    orchestrator hears its wakes' outcomes here), each in a task of its own so a listener never
    holds up a trigger."""

    def __init__(self, bus: BusEvents) -> None:
        self._bus = bus
        self._listeners: list[Callable[[TriggerOutcome], Coroutine[Any, Any, None]]] = []
        self._tasks: set[asyncio.Task[None]] = set()

    def listen(self, listener: Callable[[TriggerOutcome], Coroutine[Any, Any, None]]) -> None:
        self._listeners.append(listener)

    async def publish_outcome(self, outcome: TriggerOutcome) -> None:
        for listener in self._listeners:
            task = asyncio.create_task(listener(outcome))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        await self._bus.publish_outcome(outcome)

    async def publish_collision(self, collision: Collision) -> None:
        await self._bus.publish_collision(collision)


class _Parts:
    """The adapters, the use cases on them and the facade, for one run of the service."""

    def __init__(self, ctx: ServiceContext, settings: SupervisorSettings) -> None:
        assert ctx.redis is not None and ctx.engine is not None
        self._settings, self._clock = settings, SystemClock()
        self._params, self._kinds = settings.params(), settings.kinds()
        self.metrics = SupervisorMetrics(ctx.registry)
        self.tmux = TmuxControl(settings.tmux_socket, settings.tmux_binary)
        self.registry = Registry(ctx.engine)
        self.state = SupervisorState(ctx.redis)
        self.records = TriggerRecords(ctx, ctx.redis)
        self.trigger_rows = TriggerRows(ctx.engine)
        self._panes = PaneDriver(self.tmux)
        self._agent_states = AgentStates()
        # Each agent's environment, for its resume and fresh session (0600 files, never the database).
        self._worlds = AgentWorlds(settings.data_dir / "supervisor" / "worlds", self.tmux)
        self.access = Access(load_or_create_secret(settings), settings, self._clock)
        acks = AckBoard(self.registry, self.state)
        desktop = DesktopWatch(settings.desktop_session)
        self.threads = ThreadDesk(
            store=ThreadStore(ctx.engine), registry=self.registry, acks=acks, state=self.state, audit=ctx.record,
            metrics=self.metrics, clock=self._clock, limits=settings.guard_limits(),
        )  # fmt: skip
        self._outcome_events = OutcomeEvents(BusEvents(ctx))
        self.triggers = TriggerAgent(
            lifecycle=self._lifecycle(ctx, acks, desktop), state=self.state, audit=ctx.record,
            metrics=self.metrics, params=self._params, dedupe_ttl_secs=settings.dedupe_ttl_secs,
            store_down=lambda: ctx.postgres_down_since is not None, clock=self._clock,
        )  # fmt: skip
        runtimes = ManageRuntimes(
            registry=self.registry, terminal=self.tmux, state=self.state, acks=acks, access=self.access,
            audit=ctx.record, settings=settings, kinds=self._kinds, agent_states=self._agent_states,
            clock=self._clock, worlds=self._worlds,
        )  # fmt: skip
        self.reconciler = Reconciler(
            registry=self.registry, state=self.state, panes=self._panes, terminal=self.tmux,
            audit=ctx.record, metrics=self.metrics, params=self._params, kinds=self._kinds,
            heartbeat_ttl_secs=settings.heartbeat_ttl_secs, agent_states=self._agent_states,
            pid_alive=pid_alive, find_session=find_session_id, clock=self._clock, worlds=self._worlds,
        )  # fmt: skip
        runtimes.on_started = self.reconciler.learn
        operate = OperateTriggers(
            triggers=self.triggers, state=self.state, trigger_log=self.trigger_rows, audit=ctx.record,
            history=self.trigger_rows,
        )  # fmt: skip
        self.operations = SupervisorOperations(
            access=self.access, runtimes=runtimes, triggers=self.triggers, operate=operate, acks=acks,
            desktop=desktop, threads=self.threads, offers=self._offer_desk(ctx, settings),
        )  # fmt: skip
        self.orchestrator = Orchestrator(
            desk=self.threads, triggers=self.triggers, registry=self.registry, audit=ctx.record,
            metrics=self.metrics, clock=self._clock, limits=settings.wake_limits(),
            prompt_chars=settings.wake_prompt_chars, sweep_secs=settings.orchestrator_sweep_secs,
        )  # fmt: skip
        self._outcome_events.listen(self.orchestrator.final)
        self._agent_states.watch(self.orchestrator.agent_state_changed)

    def _offer_desk(self, ctx: ServiceContext, settings: SupervisorSettings) -> OfferDesk:
        assert ctx.engine is not None
        notices = PipelineNotices(ctx)

        async def blocked(view: ThreadView, reason: str) -> None:
            await notices.show(
                kind="thread_blocked", title=f"kronii stopped waking agents on thread {view.thread_id}",
                body=f"{reason}. `kronii thread unblock {view.thread_id} --workspace {view.workspace_id}` lets "
                "them go on.", dedup_key=f"blocked:{view.workspace_id}/{view.thread_id}", at=self._clock.wall(),
            )  # fmt: skip

        self.threads.on_blocked(blocked)
        return OfferDesk(
            store=OfferStore(ctx.engine), threads=self.threads, registry=self.registry, notices=notices,
            audit=ctx.record, metrics=self.metrics, clock=self._clock,
            without_asking=frozenset(settings.hand_without_asking),
        )  # fmt: skip

    def _lifecycle(self, ctx: ServiceContext, acks: AckBoard, desktop: DesktopWatch) -> TriggerLifecycle:
        outcomes = Outcomes(
            state=self.state, records=self.records, trigger_log=self.trigger_rows, events=self._outcome_events,
            audit=ctx.record, metrics=self.metrics, params=self._params,
            dedupe_ttl_secs=self._settings.dedupe_ttl_secs, clock=self._clock,
        )  # fmt: skip
        agent = AgentSide(
            registry=self.registry, panes=self._panes, acks=acks, agent_states=self._agent_states,
            pid_alive=pid_alive, desktop_hold=desktop.hold, histories=AgentHistories(self._worlds),
        )  # fmt: skip
        books = TriggerBooks(
            state=self.state, trigger_log=self.trigger_rows, outcomes=outcomes, metrics=self.metrics
        )
        return TriggerLifecycle(
            agent=agent, books=books, relauncher=self._relauncher(), params=self._params,
            kinds=self._kinds, clock=self._clock,
        )  # fmt: skip

    def _relauncher(self) -> Relauncher:
        return Relauncher(
            launcher=VisibleLauncher(self.tmux), registry=self.registry, state=self.state,
            trigger_log=self.trigger_rows, find_session=find_session_id,
            runtime_env=self.access.runtime_env, metrics=self.metrics, params=self._params,
            session_prefix=self._settings.session_prefix,
            status_dir=self._settings.data_dir / "supervisor" / "exits", clock=self._clock,
            worlds=self._worlds,
        )  # fmt: skip


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

    async def start(self, ctx: ServiceContext) -> None:
        settings = ctx.settings
        assert isinstance(settings, SupervisorSettings)
        if ctx.redis is None or ctx.engine is None:
            raise RuntimeError("the supervisor needs Redis and PostgreSQL")
        parts = self._parts = _Parts(ctx, settings)
        zero_common_series(ctx.metrics)
        await parts.registry.load()
        recovered = await parts.triggers.recover_written()
        if recovered:
            log.info(
                "%d trigger(s) were being typed when the supervisor stopped; looking at their panes",
                recovered,
            )
        if ctx.bus.connected:
            await SupervisorBus(parts.operations).subscribe(ctx.bus)
        for name, coro in (
            ("supervisor-queue", parts.triggers.queue_loop()),
            ("supervisor-reconcile", parts.reconciler.reconcile_forever(settings.reconcile_interval_secs)),
            ("supervisor-writer", parts.trigger_rows.write_forever()),
            ("supervisor-outbox", parts.records.drain_forever()),
            *(
                [("supervisor-orchestrator", parts.orchestrator.run_forever())]
                if settings.orchestrator_enabled
                else []
            ),
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
        await self._parts.orchestrator.stop()
        await self._parts.trigger_rows.drain()
        tmux = self._parts.tmux
        with contextlib.suppress(Exception):
            if tmux.connected:
                await tmux.command("kill-session", "-t", f"={CONTROL_SESSION}")
        await tmux.close()

    def operations(self) -> SupervisorOperations:
        """The facade the API layers call; Unavailable until the service has started."""
        if self._parts is None:
            raise Unavailable("the supervisor is starting")
        return self._parts.operations

    def routers(self) -> Iterable[APIRouter]:
        return [supervisor_router(self.operations)]

    def add_to_grpc(self, server: grpc.aio.Server) -> Iterable[str]:
        pb_grpc.add_SupervisorServiceServicer_to_server(SupervisorServicer(self.operations()), server)
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
