"""What the supervisor's use cases need of the outside world: Protocols the adapters (adapters/)
satisfy, in core types only, and the exceptions the adapters raise for them. The in-process tests
drive the use cases with fakes of these and a kronii.foundation.clock.ManualClock-like clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from kronii.foundation.audit_trail import AuditTrail
from kronii.foundation.clock import Clock
from kronii.foundation.errors import Unavailable
from kronii.supervisor.core.agent_history import HistoryMark
from kronii.supervisor.core.agent_kinds import AgentKind
from kronii.supervisor.core.agent_state import Delivery
from kronii.supervisor.core.job import Job
from kronii.supervisor.core.model import RuntimeRecord, Snapshot
from kronii.supervisor.core.offers import FailureOffer
from kronii.supervisor.core.pane_reports import Baseline, Look, PaneProbe, StartCheck, Written
from kronii.supervisor.core.payload import Payload
from kronii.supervisor.core.threads import GuardLimits, NewMessage, Posted, ThreadMessage, ThreadView
from kronii.supervisor.core.trigger import Collision, TriggerOutcome, TriggerQuery

__all__ = [
    "AuditTrail",
    "Clock",
    "DurableRecords",
    "EventBus",
    "Histories",
    "Launcher",
    "Notices",
    "Offers",
    "Panes",
    "Runtimes",
    "StoreUnavailable",
    "Terminal",
    "TerminalError",
    "Threads",
    "TriggerLog",
    "TriggerState",
]


class TerminalError(RuntimeError):
    """The terminal (tmux) refused a command or could not be asked; the message says which."""


class StoreUnavailable(Unavailable):
    """The supervisor's working state (Redis) did not answer: a 503 when nobody catches it (as the
    store's own error would be); `why` is what the store said."""

    def __init__(self, why: str) -> None:
        super().__init__("Redis is not reachable; nothing was done, try again shortly")
        self.why = why


class Panes(Protocol):
    """Reading and typing into an agent's pane (adapters/panes.py PaneDriver)."""

    async def look(self, target: str, registered_pid: int, kind: AgentKind) -> Look: ...
    async def baseline(self, target: str, payload: Payload, kind: AgentKind) -> Baseline: ...
    async def write(self, target: str, payload: Payload, kind: AgentKind, *, attempt: int) -> Written: ...
    async def resubmit(self, target: str, payload: Payload, kind: AgentKind) -> bool: ...
    async def clear_typed(self, target: str, payload: Payload, kind: AgentKind) -> bool: ...
    async def check(self, target: str, payload: Payload, kind: AgentKind, before: Baseline) -> Delivery: ...
    def done_with(self, target: str) -> None:
        """The delivery of the prompt typed into `target` is decided (taken, taken back, given up)."""
        ...


class Histories(Protocol):
    """The agent's own record of the prompts it took (adapters/agent_histories.py): marked before a
    prompt is typed, read from the mark while the ack is awaited."""

    async def mark(self, record: RuntimeRecord, kind: AgentKind) -> HistoryMark | None: ...
    async def took(self, mark: HistoryMark, prompt: str) -> bool: ...


class Terminal(Protocol):
    """The tmux server itself (adapters/tmux.py TmuxControl), for registering, starting and reading
    panes. A refusal or a tmux that cannot be asked raises TerminalError."""

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
    """The queue, outcomes and guard counters in Redis (adapters/state.py SupervisorState). A store
    that does not answer raises StoreUnavailable."""

    async def admit(
        self, pending: TriggerOutcome, ttl: int, job: Job, due: float
    ) -> TriggerOutcome | None: ...
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
    async def put_outcome(self, outcome: TriggerOutcome, ttl: int) -> None: ...
    async def get_outcome(self, trigger_id: str) -> TriggerOutcome | None: ...
    async def enqueue(self, job: Job, due: float) -> None: ...
    async def take_due(self, now: float, lease: float, limit: int = 50) -> list[Job]: ...
    async def take(self, trigger_id: str) -> Job | None: ...
    async def release_written(self, phases: set[str], now: float | None = None) -> int: ...
    async def done(self, trigger_id: str) -> None: ...
    async def queue_depth(self) -> int: ...
    async def record_attempt(
        self, agent_id: str, thread_id: str, trigger_id: str, step: int, now: float, window: float
    ) -> None: ...
    async def record_failure(
        self, workspace_id: str, agent_id: str, what: str, now: float, window: float
    ) -> None: ...
    async def count_failure(
        self, workspace_id: str, agent_id: str, why: str, now: float, window: float
    ) -> None: ...
    async def failure_streak(self, workspace_id: str, agent_id: str) -> tuple[int, float | None, str]: ...
    async def record_success(self, workspace_id: str, agent_id: str) -> None: ...
    async def thread_state(self, agent_id: str, thread_id: str) -> dict[str, Any]: ...
    async def put_thread_state(self, agent_id: str, thread_id: str, state: dict[str, Any]) -> None: ...
    async def bump_progress(self, runtime_id: str) -> None: ...


class TriggerLog(Protocol):
    """Each step of a trigger, written behind the answer; and a finished trigger's row, read back."""

    def attempt(self, trigger_id: str, step: str, outcome: str, **detail: Any) -> None: ...
    async def find(self, trigger_id: str) -> TriggerOutcome | None: ...


class TriggerHistory(Protocol):
    """The recent triggers' rows, the most recently changed first (adapters/trigger_rows.py)."""

    async def recent(
        self, query: TriggerQuery, workspaces: frozenset[str] | None
    ) -> list[TriggerOutcome]: ...


class DurableRecords(Protocol):
    """A trigger's row and audit row, durable before the answer (adapters/trigger_records.py)."""

    async def commit(self, row: dict[str, Any], audit: dict[str, Any] | None) -> str: ...


class EventBus(Protocol):
    """Outcome and collision events; a bus that is away loses them (they are in the audit trail too)."""

    async def publish_outcome(self, outcome: TriggerOutcome) -> None: ...
    async def publish_collision(self, collision: Collision) -> None: ...


class Threads(Protocol):
    """Threads in PostgreSQL (adapters/thread_store.py). A post returns once durable; a store that
    does not answer raises kronii.foundation.errors.Unavailable."""

    async def post(self, new: NewMessage, at: float, limits: GuardLimits) -> Posted: ...
    async def view(self, workspace_id: str, thread_id: str) -> ThreadView | None: ...
    async def messages(
        self, workspace_id: str, thread_id: str, after: int, limit: int
    ) -> list[ThreadMessage]: ...
    async def move_cursor(
        self, workspace_id: str, thread_id: str, name: str, cursor: int, at: float
    ) -> int: ...
    async def list_threads(
        self, workspace_id: str, *, blocked_only: bool = False, since: float | None = None
    ) -> list[ThreadView]: ...
    async def set_blocked(
        self, workspace_id: str, thread_id: str, blocked: bool, reason: str, at: float
    ) -> bool: ...


class Offers(Protocol):
    """The critic's failure offers (adapters/offer_store.py); keep() is durable before it returns."""

    async def keep(self, offer: FailureOffer) -> FailureOffer: ...
    async def find(self, offer_id: str) -> FailureOffer | None: ...
    async def latest_open(self) -> FailureOffer | None: ...
    async def accepted(self, offer_id: str, thread_id: str, seq: int, at: float) -> None: ...


class Notices(Protocol):
    """Bubbles for the person through the pipeline (adapters/notices.py); whether one went out."""

    async def show(
        self,
        *,
        kind: str,
        title: str,
        body: str,
        dedup_key: str,
        at: float,
        offer_id: str = "",
        offer_label: str = "",
    ) -> bool: ...
