"""In-memory stand-ins for the supervisor's ports (kronii.supervisor.ports), an injected clock, and
the trigger use case (usecases/trigger_agent.py, trigger_lifecycle.py, trigger_outcomes.py) wired on
them, driven through the API's conversions (api/convert.py) as a caller's messages are."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from kronii.broker.v1 import broker_pb2 as bpb
from kronii.desktop.hold import DesktopHold
from kronii.stores import subjects
from kronii.supervisor.api import convert
from kronii.supervisor.core.agent_kinds import AgentKind, KindBook
from kronii.supervisor.core.agent_state import Delivery
from kronii.supervisor.core.agent_states import AgentStates
from kronii.supervisor.core.job import Job
from kronii.supervisor.core.model import PaneFacts, RuntimeRecord, RuntimeStatus, Snapshot
from kronii.supervisor.core.pane_reports import Baseline, Look, StartCheck, Written
from kronii.supervisor.core.params import SupervisorParams
from kronii.supervisor.core.payload import Payload
from kronii.supervisor.core.runtime_index import RuntimeIndex
from kronii.supervisor.core.tokens import Claims
from kronii.supervisor.core.trigger import Collision, TriggerOutcome
from kronii.supervisor.metrics import SupervisorMetrics
from kronii.supervisor.ports import Histories, TerminalError
from kronii.supervisor.usecases.acknowledge import AckBoard
from kronii.supervisor.usecases.desktop_watch import DesktopWatch
from kronii.supervisor.usecases.relaunch_agent import Relauncher
from kronii.supervisor.usecases.trigger_agent import TriggerAgent
from kronii.supervisor.usecases.trigger_lifecycle import TriggerLifecycle
from kronii.supervisor.usecases.trigger_outcomes import Outcomes
from kronii.supervisor.usecases.trigger_parts import AgentSide, TriggerBooks
from kronii.supervisor.v1 import supervisor_pb2 as pb
from prometheus_client import CollectorRegistry

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

    def wall(self) -> float:
        return self.now + self.wall_offset

    def time(self) -> float:
        return self.wall()

    def monotonic(self) -> float:
        return self.now

    def wall_ms(self) -> int:
        return int(self.wall() * 1000)

    def monotonic_ms(self) -> int:
        return int(self.now * 1000)

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
    """The Redis side: outcomes by trigger_id (as the fields Redis keeps), the queue (a copy of
    each job, as Redis keeps one) with due times, thread guards."""

    outcomes: dict[str, dict[str, Any]] = field(default_factory=dict)
    queue: dict[str, tuple[Job, float]] = field(default_factory=dict)
    threads: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    finished: list[str] = field(default_factory=list)
    # With counts_failures, failures are kept (times as recorded) and the snapshot reports them
    # for the crash-loop guard (failure_times) and the cooldown (the streak of failed triggers,
    # with why each failed); without, every snapshot is failure-free.
    counts_failures: bool = False
    failure_times: list[float] = field(default_factory=list)
    # Per workspace and agent, as the store keys it.
    streaks: dict[tuple[str, str], list[tuple[float, str]]] = field(default_factory=dict)

    async def admit(self, pending: TriggerOutcome, ttl: int, job: Job, due: float) -> TriggerOutcome | None:
        if pending.trigger_id in self.outcomes:
            return await self.get_outcome(pending.trigger_id)
        await self.put_outcome(pending, ttl)
        await self.enqueue(job, due)
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
        streak = self.streaks.get((workspace_id, agent_id), [])
        return Snapshot(
            attempts=(),
            failures=tuple(self.failure_times),
            streak=len(streak),
            last_failure_at=streak[-1][0] if streak else None,
            thread=self.threads.get((agent_id, thread_id), {}),
            progress_epoch=0,
        )

    async def put_outcome(self, outcome: TriggerOutcome, ttl: int) -> None:
        self.outcomes[outcome.trigger_id] = asdict(outcome)

    async def get_outcome(self, trigger_id: str) -> TriggerOutcome | None:
        stored = self.outcomes.get(trigger_id)
        return TriggerOutcome(**stored) if stored is not None else None

    async def enqueue(self, job: Job, due: float) -> None:
        self.queue[job.trigger_id] = (copy.deepcopy(job), due)

    async def take_due(self, now: float, lease: float, limit: int = 50) -> list[Job]:
        due = [(tid, job) for tid, (job, at) in self.queue.items() if at <= now][:limit]
        for tid, job in due:
            self.queue[tid] = (job, now + lease)
        return [copy.deepcopy(job) for _, job in due]

    async def take(self, trigger_id: str) -> Job | None:
        entry = self.queue.get(trigger_id)
        return copy.deepcopy(entry[0]) if entry else None

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

    async def count_failure(
        self, workspace_id: str, agent_id: str, why: str, now: float, window: float
    ) -> None:
        if self.counts_failures:
            self.failure_times.append(now)
            self.streaks.setdefault((workspace_id, agent_id), []).append((now, why))

    async def failure_streak(self, workspace_id: str, agent_id: str) -> tuple[int, float | None, str]:
        streak = self.streaks.get((workspace_id, agent_id), [])
        return len(streak), streak[-1][0] if streak else None, streak[-1][1] if streak else ""

    async def record_success(self, workspace_id: str, agent_id: str) -> None:
        self.streaks.pop((workspace_id, agent_id), None)

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
        # Panes (targets) whose writes fail, as tmux refusing the keys would (a real failure).
        self.failing: set[str] = set()
        # Prompts taken back from the input box after they stayed there.
        self.cleared: list[str] = []
        self.done: list[str] = []

    async def look(self, target: str, registered_pid: int, kind: AgentKind) -> Look:
        return Look(facts=self.facts, probe=None)

    async def baseline(self, target: str, payload: Payload, kind: AgentKind) -> Baseline:
        return Baseline()

    async def write(self, target: str, payload: Payload, kind: AgentKind, *, attempt: int) -> Written:
        if target in self.failing:
            raise TerminalError(f"tmux refused the keys for {target}")
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

    async def clear_typed(self, target: str, payload: Payload, kind: AgentKind) -> bool:
        self.cleared.append(payload.text)
        return True

    async def check(self, target: str, payload: Payload, kind: AgentKind, before: Baseline) -> Delivery:
        return self.seen

    def done_with(self, target: str) -> None:
        self.done.append(target)


class FakeTriggerLog:
    def __init__(self) -> None:
        self.steps: list[tuple[str, str, str]] = []

    def attempt(self, trigger_id: str, step: str, outcome: str, **detail: Any) -> None:
        self.steps.append((trigger_id, step, outcome))

    async def find(self, trigger_id: str) -> TriggerOutcome | None:
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
    """The events as they would be published: each on its subject, in its wire message."""

    def __init__(self) -> None:
        self.published: list[tuple[str, object]] = []
        # In-process listeners of the outcomes (the orchestrator), as app.py's OutcomeEvents has.
        self.listeners: list[Callable[[TriggerOutcome], Awaitable[None]]] = []

    async def publish_outcome(self, outcome: TriggerOutcome) -> None:
        self.published.append((subjects.SUPERVISOR_OUTCOME.pattern, convert.outcome_message(outcome)))
        for listener in self.listeners:
            await listener(outcome)

    async def publish_collision(self, collision: Collision) -> None:
        self.published.append((subjects.SUPERVISOR_COLLISION.pattern, convert.collision_message(collision)))


class FakeAudit:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, str]] = []

    async def __call__(
        self, *, actor: str, action: str, subject: str = "", outcome: str = "", **detail: Any
    ) -> None:
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


class WireTriggers:
    """The trigger use case as the API drives it: a caller's message in, its answer out (api/convert.py)."""

    def __init__(self, triggers: TriggerAgent) -> None:
        self.triggers = triggers

    @property
    def inflight(self) -> dict[str, asyncio.Task[TriggerOutcome]]:
        return self.triggers.inflight

    async def trigger(
        self, req: pb.TriggerRuntimeRequest, claims: Claims, request_id: str = ""
    ) -> pb.TriggerOutcome:
        outcome = await self.triggers.trigger(convert.trigger_command(req, request_id), claims)
        return convert.outcome_message(outcome)

    async def take_due(self) -> None:
        await self.triggers.take_due()


class WireAcks:
    """The ack use case as the API drives it."""

    def __init__(self, acks: AckBoard) -> None:
        self.board = acks

    async def ack(self, req: pb.AckTriggerRequest, claims: Claims | None) -> pb.AckTriggerResponse:
        return convert.ack_message(await self.board.ack(convert.ack(req), claims))

    def acknowledge_runtime(self, runtime_id: str, how: str) -> list[str]:
        return self.board.acknowledge_runtime(runtime_id, how)


class BrokerFeed:
    """The input broker's messages on the bus, read as api/bus.py reads them."""

    def __init__(self, desktop: DesktopWatch) -> None:
        self.watch = desktop

    async def on_control(self, _subject: str, message: bpb.ControlChanged) -> None:
        self.watch.heard(DesktopHold.from_message(message))


@dataclass
class TriggerWorld:
    desk: WireTriggers
    acks: WireAcks
    clock: FakeClock
    state: FakeState
    panes: FakePanes
    registry: FakeRuntimes
    records: FakeRecords
    bus: FakeBus
    trigger_log: FakeTriggerLog
    desktop: BrokerFeed


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


def trigger_world(
    panes: FakePanes,
    *records: RuntimeRecord,
    desktop_session: str = "",
    histories: Histories | None = None,
    kinds: KindBook | None = None,
) -> TriggerWorld:
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
        agent=AgentSide(
            registry=registry, panes=panes, acks=acks, agent_states=AgentStates(),
            pid_alive=lambda pid: True, desktop_hold=desktop.hold, histories=histories,
        ),
        books=TriggerBooks(state=state, trigger_log=trigger_log, outcomes=outcomes, metrics=metrics),
        relauncher=relauncher, params=params, kinds=kinds or KindBook(), clock=clock,
    )  # fmt: skip
    desk = TriggerAgent(
        lifecycle=lifecycle,
        state=state,
        audit=audit,
        metrics=metrics,
        params=params,
        dedupe_ttl_secs=3600,
        store_down=lambda: False,
        clock=clock,
    )
    return TriggerWorld(
        WireTriggers(desk), WireAcks(acks), clock, state, panes, registry, records_port, bus, trigger_log,
        BrokerFeed(desktop),
    )  # fmt: skip
