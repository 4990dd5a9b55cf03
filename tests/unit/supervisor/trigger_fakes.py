"""In-memory stand-ins for the supervisor's ports (kronii.supervisor.ports), an injected clock, and
the trigger use case (triggers.py, lifecycle.py, outcomes.py) wired on them."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from google.protobuf.message import Message
from kronii.common.subjects import Topic
from kronii.supervisor.adapters.launcher import StartCheck
from kronii.supervisor.adapters.panes import Baseline, Look, Written
from kronii.supervisor.core.agent_kinds import AgentKind, KindBook
from kronii.supervisor.core.agent_state import Delivery
from kronii.supervisor.core.model import PaneFacts, RuntimeRecord, RuntimeStatus, Snapshot
from kronii.supervisor.core.params import SupervisorParams
from kronii.supervisor.core.payload import Payload
from kronii.supervisor.core.runtime_index import RuntimeIndex
from kronii.supervisor.core.tokens import Claims
from kronii.supervisor.metrics import SupervisorMetrics
from kronii.supervisor.usecases.acknowledge import AckBoard
from kronii.supervisor.usecases.desktop_watch import DesktopWatch
from kronii.supervisor.usecases.relaunch_agent import Relauncher
from kronii.supervisor.usecases.trigger_agent import TriggerDesk
from kronii.supervisor.usecases.trigger_lifecycle import TriggerLifecycle
from kronii.supervisor.usecases.trigger_outcomes import Outcomes
from prometheus_client import CollectorRegistry

_M = TypeVar("_M", bound=Message)

T0 = 1_800_000_000.0
CALLER = Claims(
    subject="coordinator",
    scopes=frozenset({"trigger", "read", "operate"}),
    workspaces=frozenset({"*"}),
    expires_at=T0 + 3600,
)


class FakeClock:
    """Epoch and monotonic time that move only when a test moves them: `advance` moves both (time
    passes), `step_wall` only the wall clock (NTP or a person setting the time)."""

    def __init__(self, now: float = T0) -> None:
        self.now = now
        self.wall_offset = 0.0

    def time(self) -> float:
        return self.now + self.wall_offset

    def monotonic(self) -> float:
        return self.now

    def advance(self, secs: float) -> None:
        self.now += secs

    def step_wall(self, secs: float) -> None:
        self.wall_offset += secs


class FakeRuntimes(RuntimeIndex):
    """The registry without PostgreSQL: the same reads (RuntimeIndex), writes straight to memory."""

    def __init__(self, *records: RuntimeRecord) -> None:
        super().__init__()
        self._records.update({record.runtime_id: record for record in records})

    @property
    def records(self) -> dict[str, RuntimeRecord]:
        return self._records

    async def add(self, record: RuntimeRecord) -> RuntimeRecord:
        self._records[record.runtime_id] = record
        return record

    async def change(self, runtime_id: str, **fields: Any) -> RuntimeRecord:
        self._records[runtime_id] = replace(self._records[runtime_id], **fields)
        return self._records[runtime_id]


@dataclass
class FakeState:
    """The Redis side: outcomes by trigger_id, the queue with due times, thread guards."""

    outcomes: dict[str, dict[str, Any]] = field(default_factory=dict)
    queue: dict[str, tuple[dict[str, Any], float]] = field(default_factory=dict)
    threads: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    finished: list[str] = field(default_factory=list)
    # With counts_failures, failures are kept (times as recorded) and the snapshot reports them
    # for the cooldown and crash-loop guards; without, every snapshot is failure-free.
    counts_failures: bool = False
    failure_times: list[float] = field(default_factory=list)

    async def admit(
        self, trigger_id: str, outcome: dict[str, Any], ttl: int, job: dict[str, Any], due: float
    ) -> dict[str, Any] | None:
        if trigger_id in self.outcomes:
            return self.outcomes[trigger_id]
        self.outcomes[trigger_id] = outcome
        self.queue[trigger_id] = (job, due)
        return None

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
    ) -> Snapshot:
        return Snapshot(
            attempts=(),
            failures=tuple(self.failure_times),
            streak=len(self.failure_times),
            last_failure_at=self.failure_times[-1] if self.failure_times else None,
            thread=self.threads.get((agent_id, thread_id), {}),
            progress_epoch=0,
        )

    async def put_outcome(self, trigger_id: str, outcome: dict[str, Any], ttl: int) -> None:
        self.outcomes[trigger_id] = outcome

    async def get_outcome(self, trigger_id: str) -> dict[str, Any] | None:
        return self.outcomes.get(trigger_id)

    async def enqueue(self, trigger_id: str, job: dict[str, Any], due: float) -> None:
        self.queue[trigger_id] = (job, due)

    async def take_due(self, now: float, lease: float, limit: int = 50) -> list[tuple[str, dict[str, Any]]]:
        due = [(tid, job) for tid, (job, at) in self.queue.items() if at <= now][:limit]
        for tid, job in due:
            self.queue[tid] = (job, now + lease)
        return due

    async def take(self, trigger_id: str) -> dict[str, Any] | None:
        entry = self.queue.get(trigger_id)
        return entry[0] if entry else None

    async def release_written(self, phases: set[str], now: float | None = None) -> int:
        return 0

    async def done(self, trigger_id: str) -> None:
        self.queue.pop(trigger_id, None)
        self.finished.append(trigger_id)

    async def queue_depth(self) -> int:
        return len(self.queue)

    async def record_attempt(
        self, agent_id: str, thread_id: str, trigger_id: str, step: int, now: float, window: float
    ) -> None:
        return None

    async def record_failure(
        self, workspace_id: str, agent_id: str, what: str, now: float, window: float
    ) -> None:
        if self.counts_failures:
            self.failure_times.append(now)

    async def record_success(self, workspace_id: str, agent_id: str) -> None:
        self.failure_times.clear()

    async def thread_state(self, agent_id: str, thread_id: str) -> dict[str, Any]:
        return self.threads.get((agent_id, thread_id), {})

    async def put_thread_state(self, agent_id: str, thread_id: str, state: dict[str, Any]) -> None:
        self.threads[(agent_id, thread_id)] = state

    async def bump_progress(self, runtime_id: str) -> None:
        return None


class FakePanes:
    """A pane that takes each prompt: typed, then seen submitted. `facts` is what a look shows;
    `typing_secs` holds each write that long (on the event loop), to see two triggers overlap."""

    def __init__(
        self, facts: PaneFacts | None = None, typing_secs: float = 0.0, seen: Delivery = Delivery.SUBMITTED
    ) -> None:
        self.facts = facts or PaneFacts()
        self.typing_secs = typing_secs
        self.seen = seen
        self.written: list[tuple[str, str]] = []
        self.typing_now = 0
        self.most_at_once = 0

    async def look(self, target: str, registered_pid: int, kind: AgentKind) -> Look:
        return Look(facts=self.facts, probe=None)

    async def baseline(self, target: str, payload: Payload, kind: AgentKind) -> Baseline:
        return Baseline()

    async def write(self, target: str, payload: Payload, kind: AgentKind, *, attempt: int) -> Written:
        self.typing_now += 1
        self.most_at_once = max(self.most_at_once, self.typing_now)
        try:
            await asyncio.sleep(self.typing_secs)
            self.written.append((target, payload.text))
        finally:
            self.typing_now -= 1
        return Written(submit_only=False)

    async def resubmit(self, target: str, payload: Payload, kind: AgentKind) -> bool:
        return True

    async def check(self, target: str, payload: Payload, kind: AgentKind, before: Baseline) -> Delivery:
        return self.seen


class FakeTriggerLog:
    def __init__(self) -> None:
        self.steps: list[tuple[str, str, str]] = []

    def attempt(self, trigger_id: str, step: str, outcome: str, **detail: Any) -> None:
        self.steps.append((trigger_id, step, outcome))

    async def find(self, trigger_id: str) -> dict[str, Any] | None:
        return None


class FakeRecords:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self.audits: list[dict[str, Any] | None] = []

    async def commit(self, row: dict[str, Any], audit: dict[str, Any] | None) -> str:
        self.rows.append(row)
        self.audits.append(audit)
        return "postgres"


class FakeBus:
    def __init__(self) -> None:
        self.published: list[tuple[str, Message]] = []

    async def publish(self, topic: Topic[_M], message: _M) -> None:
        self.published.append((topic.pattern, message))


class FakeAudit:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, str]] = []

    async def __call__(self, actor: str, action: str, subject: str, outcome: str, **detail: Any) -> None:
        self.rows.append((actor, action, subject, outcome))


class NoLauncher:
    """The fallback chain is not these tests' business: any start fails."""

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
        return StartCheck(False, detail="no launcher in this test")


@dataclass
class TriggerWorld:
    desk: TriggerDesk
    acks: AckBoard
    clock: FakeClock
    state: FakeState
    panes: FakePanes
    registry: FakeRuntimes
    records: FakeRecords
    bus: FakeBus
    trigger_log: FakeTriggerLog
    desktop: DesktopWatch


def runtime(runtime_id: str = "rt-1", pane: str = "%1", agent_id: str = "agent") -> RuntimeRecord:
    return RuntimeRecord(
        runtime_id=runtime_id,
        agent_id=agent_id,
        workspace_id="ws",
        pty_target=pane,
        registered_at=T0 - 60,
        kind="generic",
        status=RuntimeStatus.ACTIVE,
        managed=True,
    )


def trigger_world(panes: FakePanes, *records: RuntimeRecord, desktop_session: str = "") -> TriggerWorld:
    clock, state, registry = FakeClock(), FakeState(), FakeRuntimes(*(records or (runtime(),)))
    desktop = DesktopWatch(desktop_session)
    trigger_log, records_port, bus, audit = FakeTriggerLog(), FakeRecords(), FakeBus(), FakeAudit()
    params = SupervisorParams()
    metrics = SupervisorMetrics(CollectorRegistry())
    outcomes = Outcomes(
        state=state,
        records=records_port,
        trigger_log=trigger_log,
        events=bus,
        audit=audit,
        metrics=metrics,
        params=params,
        dedupe_ttl_secs=3600,
        clock=clock,
    )
    relauncher = Relauncher(
        launcher=NoLauncher(),
        registry=registry,
        state=state,
        trigger_log=trigger_log,
        find_session=lambda kind, pid, cwd: "",
        runtime_env=lambda runtime_id, workspace_id: {},
        metrics=metrics,
        params=params,
        session_prefix="kronii-",
        status_dir=Path("exits"),
        clock=clock,
    )
    acks = AckBoard(registry, state)
    lifecycle = TriggerLifecycle(
        registry=registry,
        state=state,
        panes=panes,
        acks=acks,
        outcomes=outcomes,
        relauncher=relauncher,
        trigger_log=trigger_log,
        metrics=metrics,
        params=params,
        kinds=KindBook(),
        agent_states={},
        pid_alive=lambda pid: True,
        clock=clock,
        desktop_hold=desktop.hold,
    )
    desk = TriggerDesk(
        lifecycle=lifecycle,
        state=state,
        trigger_log=trigger_log,
        audit=audit,
        metrics=metrics,
        params=params,
        dedupe_ttl_secs=3600,
        store_down=lambda: False,
        clock=clock,
    )
    return TriggerWorld(desk, acks, clock, state, panes, registry, records_port, bus, trigger_log, desktop)
