"""What the orchestration needs of the outside world, and what the API layers need of the orchestration.

The adapters (adapters/) satisfy the first group, app.py's SupervisorApp the second
(SupervisorOperations); the in-process tests drive the orchestration with fakes of the first and an
injected clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from google.protobuf.message import Message
from kronii.common.subjects import Topic
from kronii.supervisor.core.agent_kinds import AgentKind
from kronii.supervisor.core.agent_state import Delivery
from kronii.supervisor.core.model import RuntimeRecord, Snapshot
from kronii.supervisor.core.payload import Payload
from kronii.supervisor.core.tokens import Claims
from kronii.supervisor.v1 import supervisor_pb2 as pb

if TYPE_CHECKING:
    from kronii.supervisor.adapters.launcher import StartCheck
    from kronii.supervisor.adapters.panes import Baseline, Look, Written
    from kronii.supervisor.adapters.tmux import PaneProbe

__all__ = [
    "AuditTrail",
    "Clock",
    "DurableRecords",
    "EventBus",
    "Launcher",
    "Panes",
    "Runtimes",
    "SupervisorOperations",
    "Terminal",
    "TriggerLog",
    "TriggerState",
]

_M = TypeVar("_M", bound=Message)


class Clock(Protocol):
    """Two clocks: the wall clock for what is written down for people (records, audit rows,
    events, token expiry), and a clock nobody can set for every duration: deadlines, leases,
    guard windows and cooldowns, defer times, the queue. A step of the wall clock (NTP, a person
    setting the time) then moves no duration."""

    def time(self) -> float:
        """Epoch seconds of the wall clock: only for records."""
        ...

    def monotonic(self) -> float:
        """Monotonic seconds, anchored to the epoch when the process started (so the values kept
        in Redis across a restart stay comparable): durations, deadlines and the queue."""
        ...


class Panes(Protocol):
    """Reading and typing into an agent's pane (adapters/panes.py PaneDriver)."""

    async def look(self, target: str, registered_pid: int, kind: AgentKind) -> Look: ...
    async def baseline(self, target: str, payload: Payload, kind: AgentKind) -> Baseline: ...
    async def write(self, target: str, payload: Payload, kind: AgentKind, *, attempt: int) -> Written: ...
    async def resubmit(self, target: str, payload: Payload, kind: AgentKind) -> bool: ...
    async def check(self, target: str, payload: Payload, kind: AgentKind, before: Baseline) -> Delivery: ...


class Terminal(Protocol):
    """The tmux server itself (adapters/tmux.py TmuxControl), for registering, starting and reading panes."""

    socket: str | None

    @property
    def connected(self) -> bool: ...

    async def probe(self, target: str) -> PaneProbe: ...
    async def command(self, *args: str) -> list[str]: ...
    async def pane_exists(self, pane_id: str) -> bool: ...
    async def start_agent(
        self,
        session: str,
        window: str,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> tuple[str, int]: ...


class Launcher(Protocol):
    """Starts a resume or a spawn where a person can see it, and says whether it started."""

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
    ) -> StartCheck: ...


class Runtimes(Protocol):
    """The runtime registry (adapters/registry.py): a write-through cache, so reads do not wait."""

    async def add(self, record: RuntimeRecord) -> RuntimeRecord: ...
    async def change(self, runtime_id: str, **fields: Any) -> RuntimeRecord: ...
    def get(self, runtime_id: str) -> RuntimeRecord | None: ...
    def all(self) -> list[RuntimeRecord]: ...
    def query(
        self, *, workspace_id: str = "", agent_id: str = "", include_offline: bool = False
    ) -> list[RuntimeRecord]: ...
    def for_agent(self, workspace_id: str, agent_id: str) -> RuntimeRecord | None: ...


class TriggerState(Protocol):
    """The queue, outcomes and guard counters in Redis (adapters/state.py SupervisorState)."""

    async def admit(
        self, trigger_id: str, outcome: dict[str, Any], ttl: int, job: dict[str, Any], due: float
    ) -> dict[str, Any] | None: ...
    async def snapshot(
        self,
        *,
        workspace_id: str,
        agent_id: str,
        thread_id: str,
        runtime_id: str,
        now: float,
        rate_window: float,
        crash_window: float,
    ) -> Snapshot: ...
    async def put_outcome(self, trigger_id: str, outcome: dict[str, Any], ttl: int) -> None: ...
    async def get_outcome(self, trigger_id: str) -> dict[str, Any] | None: ...
    async def enqueue(self, trigger_id: str, job: dict[str, Any], due: float) -> None: ...
    async def take_due(
        self, now: float, lease: float, limit: int = 50
    ) -> list[tuple[str, dict[str, Any]]]: ...
    async def take(self, trigger_id: str) -> dict[str, Any] | None: ...
    async def release_written(self, phases: set[str], now: float | None = None) -> int: ...
    async def done(self, trigger_id: str) -> None: ...
    async def queue_depth(self) -> int: ...
    async def record_attempt(
        self, agent_id: str, thread_id: str, trigger_id: str, step: int, now: float, window: float
    ) -> None: ...
    async def record_failure(
        self, workspace_id: str, agent_id: str, what: str, now: float, window: float
    ) -> None: ...
    async def record_success(self, workspace_id: str, agent_id: str) -> None: ...
    async def thread_state(self, agent_id: str, thread_id: str) -> dict[str, Any]: ...
    async def put_thread_state(self, agent_id: str, thread_id: str, state: dict[str, Any]) -> None: ...
    async def bump_progress(self, runtime_id: str) -> None: ...


class TriggerLog(Protocol):
    """Each step of a trigger, written behind the answer; and a finished trigger's row, read back."""

    def attempt(self, trigger_id: str, step: str, outcome: str, **detail: Any) -> None: ...
    async def find(self, trigger_id: str) -> dict[str, Any] | None: ...


class DurableRecords(Protocol):
    """A trigger's row and audit row, durable before the answer (records.py TriggerRecords)."""

    async def commit(self, row: dict[str, Any], audit: dict[str, Any] | None) -> str: ...


class AuditTrail(Protocol):
    async def __call__(self, actor: str, action: str, subject: str, outcome: str, **detail: Any) -> None: ...


class EventBus(Protocol):
    """Outcome and collision events; a bus that is away loses them (they are in the audit trail too)."""

    async def publish(self, topic: Topic[_M], message: _M) -> None: ...


class SupervisorOperations(Protocol):
    """What the HTTP router and the gRPC servicer call: each takes the request and the caller's claims."""

    def authenticate(self, token: str | None) -> Claims: ...
    def identity_proof(self, nonce: str) -> str: ...
    async def register(
        self, req: pb.RegisterRuntimeRequest, claims: Claims
    ) -> pb.RegisterRuntimeResponse: ...
    async def trigger(
        self, req: pb.TriggerRuntimeRequest, claims: Claims, request_id: str = ""
    ) -> pb.TriggerOutcome: ...
    async def heartbeat(self, req: pb.HeartbeatRuntimeRequest, claims: Claims) -> pb.Runtime: ...
    async def deregister(self, req: pb.DeregisterRuntimeRequest, claims: Claims) -> pb.Runtime: ...
    async def list_runtimes(self, req: pb.ListRuntimesRequest, claims: Claims) -> pb.ListRuntimesResponse: ...
    async def get_runtime(self, req: pb.GetRuntimeRequest, claims: Claims) -> pb.Runtime: ...
    async def get_trigger(self, req: pb.GetTriggerRequest, claims: Claims) -> pb.TriggerOutcome: ...
    async def ack(self, req: pb.AckTriggerRequest, claims: Claims | None) -> pb.AckTriggerResponse: ...
    async def spawn(self, req: pb.SpawnRuntimeRequest, claims: Claims) -> pb.SpawnRuntimeResponse: ...
    async def set_paused(self, req: pb.SetRuntimePausedRequest, claims: Claims) -> pb.Runtime: ...
    async def force(self, req: pb.ForceTriggerRequest, claims: Claims) -> pb.TriggerOutcome: ...
    async def logs(self, req: pb.RuntimeLogsRequest, claims: Claims) -> pb.RuntimeLogsResponse: ...
    async def unblock(self, req: pb.UnblockThreadRequest, claims: Claims) -> pb.UnblockThreadResponse: ...
