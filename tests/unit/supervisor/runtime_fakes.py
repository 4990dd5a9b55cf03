"""Stand-ins for tmux and the launcher (kronii.supervisor.ports), and the registry's use cases
(usecases/manage_runtimes.py, reconcile_registry.py, relaunch_agent.py) wired on them with an
injected clock, driven through the API's conversions (api/convert.py) as a caller's messages are."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kronii.supervisor.adapters.tmux_connection import TmuxError
from kronii.supervisor.api import convert
from kronii.supervisor.core.agent_kinds import AgentKind, KindBook
from kronii.supervisor.core.agent_states import AgentStates
from kronii.supervisor.core.pane_reports import PaneProbe, StartCheck
from kronii.supervisor.core.params import SupervisorParams
from kronii.supervisor.core.tokens import Claims
from kronii.supervisor.metrics import SupervisorMetrics
from kronii.supervisor.settings import SupervisorSettings
from kronii.supervisor.usecases.access import Access
from kronii.supervisor.usecases.acknowledge import AckBoard
from kronii.supervisor.usecases.manage_runtimes import ManageRuntimes
from kronii.supervisor.usecases.reconcile_registry import Reconciler
from kronii.supervisor.usecases.relaunch_agent import Relauncher
from kronii.supervisor.v1 import supervisor_pb2 as pb
from prometheus_client import CollectorRegistry
from pydantic import SecretStr

from tests.unit.supervisor.trigger_fakes import (
    FakeAudit,
    FakeClock,
    FakePanes,
    FakeRuntimes,
    FakeState,
    FakeTriggerLog,
    runtime,
)


@dataclass
class FakeTerminal:
    """A tmux server with the panes in `panes`; `broken` makes every call fail as tmux would."""

    socket: str | None = "kronii-test"
    panes: set[str] = field(default_factory=lambda: {"%1"})
    broken: bool = False
    started: list[tuple[str, str, tuple[str, ...], dict[str, str]]] = field(default_factory=list)

    @property
    def connected(self) -> bool:
        return not self.broken

    def _check(self) -> None:
        if self.broken:
            raise TmuxError("no server running")

    async def probe(self, target: str) -> PaneProbe:
        self._check()
        return PaneProbe(
            pane_id="%7",
            pane_pid=4242,
            dead=False,
            cursor_y=0,
            session="s",
            current_command="codex",
            human_client_activity=(),
            screen=(),
        )

    async def command(self, *args: str) -> list[str]:
        self._check()
        return []

    async def pane_exists(self, pane_id: str) -> bool:
        self._check()
        return pane_id in self.panes

    async def start_agent(
        self,
        session: str,
        window: str,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> tuple[str, int]:
        self._check()
        self.started.append((session, window, tuple(argv), dict(env or {})))
        self.panes.add("%9")
        return "%9", 0


class FakeLauncher:
    def __init__(self, check: StartCheck) -> None:
        self.check = check
        self.starts: list[dict[str, Any]] = []

    async def start(
        self,
        *,
        session: str,
        window: str,
        argv: Sequence[str],
        env: Mapping[str, str],
        cwd: str | None,
        kind: AgentKind,
        exec_style: bool,
        status_dir: Path,
    ) -> StartCheck:
        self.starts.append(
            {"session": session, "window": window, "argv": list(argv), "exec_style": exec_style}
        )
        return self.check


class WireRuntimes:
    """The registry's use case as the API drives it: a caller's message in, its answer out."""

    def __init__(self, runtimes: ManageRuntimes) -> None:
        self.runtimes = runtimes

    async def register(self, req: pb.RegisterRuntimeRequest, claims: Claims) -> pb.RegisterRuntimeResponse:
        return convert.registered_message(await self.runtimes.register(convert.register(req), claims))

    async def heartbeat(self, req: pb.HeartbeatRuntimeRequest, claims: Claims) -> pb.Runtime:
        return convert.runtime_message(await self.runtimes.heartbeat(convert.heartbeat(req), claims))

    async def spawn(self, req: pb.SpawnRuntimeRequest, claims: Claims) -> pb.SpawnRuntimeResponse:
        return convert.spawned_message(await self.runtimes.spawn(convert.spawn(req), claims))


@dataclass
class RuntimeWorld:
    desk: WireRuntimes
    reconciler: Reconciler
    clock: FakeClock
    registry: FakeRuntimes
    terminal: FakeTerminal
    audit: FakeAudit
    state: FakeState
    states: AgentStates

    @property
    def agent_states(self) -> dict[str, str]:
        return self.states.as_dict()


def settings(tmp: Path) -> SupervisorSettings:
    return SupervisorSettings(token_secret=SecretStr("s" * 32), data_dir=tmp, session_prefix="kronii-")


def runtime_world(tmp: Path, panes: FakePanes | None = None, *, alive: bool = True) -> RuntimeWorld:
    clock, state, registry = FakeClock(), FakeState(), FakeRuntimes(runtime())
    terminal, audit = FakeTerminal(), FakeAudit()
    agent_states = AgentStates()
    config = settings(tmp)
    metrics = SupervisorMetrics(CollectorRegistry())
    desk = ManageRuntimes(
        registry=registry,
        terminal=terminal,
        state=state,
        acks=AckBoard(registry, state),
        access=Access(b"s" * 32, config, clock),
        audit=audit,
        settings=config,
        kinds=KindBook(),
        agent_states=agent_states,
        clock=clock,
    )
    reconciler = Reconciler(
        registry=registry,
        state=state,
        panes=panes or FakePanes(),
        terminal=terminal,
        audit=audit,
        metrics=metrics,
        params=SupervisorParams(),
        kinds=KindBook(),
        heartbeat_ttl_secs=60.0,
        agent_states=agent_states,
        pid_alive=lambda pid: alive,
        find_session=lambda kind, pid, cwd: "",
        clock=clock,
    )
    return RuntimeWorld(WireRuntimes(desk), reconciler, clock, registry, terminal, audit, state, agent_states)


def relauncher(
    launcher: FakeLauncher, registry: FakeRuntimes, clock: FakeClock, found_session: str = ""
) -> Relauncher:
    return Relauncher(
        launcher=launcher,
        registry=registry,
        state=FakeState(),
        trigger_log=FakeTriggerLog(),
        find_session=lambda kind, pid, cwd: found_session,
        runtime_env=lambda runtime_id, workspace_id: {},
        metrics=SupervisorMetrics(CollectorRegistry()),
        params=SupervisorParams(),
        session_prefix="kronii-",
        status_dir=Path("exits"),
        clock=clock,
    )
