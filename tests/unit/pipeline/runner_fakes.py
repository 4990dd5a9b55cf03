"""In-process parts for the runner's orchestration tests: a clock the test moves, and fakes of the
ports in kronii.pipeline.ports that remember what the runner asked of them."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kronii.pipeline.core.answers import Admit, CaptureOutcome
from kronii.pipeline.core.budget import PluginContent
from kronii.pipeline.core.roles.values import (
    Called,
    CallRecord,
    Candidate,
    ConfidenceLabel,
    CostLabel,
    Fragment,
    Notification,
    Plan,
    PlanHistory,
    Role,
    RoleContext,
    Synthesis,
)
from kronii.pipeline.core.router import BaseSnapshot, Capability, Family, PluginInfo
from kronii.pipeline.core.states import Priority, Trigger, TriggerKind
from kronii.pipeline.ports import RunnerPorts
from kronii.pipeline.usecases.in_process import InMemoryRuns

START_MS = 1_700_000_000_000
SCREENCAPTURE = PluginInfo("screencapture", True, True, frozenset({Capability.SNAPSHOT}))


class FakeClock:
    """A kronii.foundation.clock.Clock the test moves, in milliseconds; its two scales agree."""

    def __init__(self, now_ms: int = START_MS) -> None:
        self.now_ms = now_ms

    def __call__(self) -> int:
        return self.now_ms

    def wall(self) -> float:
        return self.now_ms / 1000

    def monotonic(self) -> float:
        return self.now_ms / 1000

    def wall_ms(self) -> int:
        return self.now_ms

    def monotonic_ms(self) -> int:
        return self.now_ms

    def advance(self, ms: int) -> None:
        self.now_ms += ms


def focus(
    at_ms: int,
    *,
    app: str = "code",
    title: str = "notes.md - Visual Studio Code",
    window_id: int = 7,
    priority: Priority = Priority.NORMAL,
) -> Trigger:
    return Trigger(
        TriggerKind.FOCUS_CHANGED,
        at_ms,
        app=app,
        wm_class=app,
        window_id=window_id,
        title=title,
        priority=priority,
    )


class FakeSnapshots:
    async def latest(self) -> BaseSnapshot | None:
        return None


@dataclass
class FakePlugins:
    infos_answer: list[PluginInfo] = field(default_factory=list)

    async def infos(self) -> Sequence[PluginInfo]:
        return self.infos_answer

    async def pull(self, app_ids: Sequence[str], full: bool, run_id: str) -> Sequence[PluginContent]:
        return []


def _call(role: Role) -> CallRecord:
    return CallRecord(role, "fake", 10, 5, 1)


CANDIDATE = Candidate(
    "review", "review:notes", "Review the notes", "you opened them", 0.9, ConfidenceLabel.HIGH, ("window",)
)


@dataclass
class FakeBackend:
    """Extracts one fragment, proposes CANDIDATE, and plans to notify when `notifies`."""

    notifies: bool = True
    min_cooldown_ms: int = 120_000
    failing_role: Role | None = None
    contexts: list[RoleContext] = field(default_factory=list)

    @property
    def name(self) -> str:
        return "fake"

    def _check(self, role: Role) -> None:
        if role is self.failing_role:
            raise RuntimeError(f"{role.value} broke")

    async def extract(self, context: RoleContext, family: Family) -> Called[list[Fragment]]:
        self._check(Role.EXTRACTOR)
        self.contexts.append(context)
        return Called([Fragment("file", "notes.md", 0.9, "window")], _call(Role.EXTRACTOR))

    async def synthesize(self, fragments: Sequence[Fragment]) -> Called[Synthesis]:
        self._check(Role.SYNTHESIZER)
        return Called(
            Synthesis((CANDIDATE,), tuple(fragments), (), "hash-1", CostLabel.LOW), _call(Role.SYNTHESIZER)
        )

    async def plan(self, synthesis: Synthesis, history: PlanHistory) -> Called[Plan]:
        self._check(Role.PLANNER)
        plan = Plan(self.notifies, history.now_ms + 600_000, self.min_cooldown_ms, (), "fake plan")
        return Called(plan, _call(Role.PLANNER))

    async def notify(self, plan: Plan, synthesis: Synthesis) -> Called[Notification | None]:
        self._check(Role.NOTIFIER)
        notification = Notification(
            "Review the notes", "body", "window", (), synthesis.context_hash, "review:notes"
        )
        return Called(notification, _call(Role.NOTIFIER))


@dataclass
class FakeNotifier:
    muted_keys: dict[str, str] = field(default_factory=dict)
    sent: list[tuple[str, Notification, str]] = field(default_factory=list)
    # The yes button each notification had ("" for none), in the order they were sent.
    accept_labels: list[str] = field(default_factory=list)

    async def muted(self, source_key: str) -> str | None:
        return self.muted_keys.get(source_key)

    async def notify(
        self, run_id: str, notification: Notification, source_key: str, accept_label: str = ""
    ) -> str:
        self.sent.append((run_id, notification, source_key))
        self.accept_labels.append(accept_label)
        return f"n-{len(self.sent)}"


@dataclass
class FakeScheduler:
    """Admits everything unless `answer` says otherwise; None plays a scheduler that does not answer."""

    answer: Admit | None = field(default_factory=lambda: Admit(True))
    plans: list[tuple[str, str, Plan, int]] = field(default_factory=list)

    async def admit(self, app: str, trigger: Trigger) -> Admit | None:
        return self.answer

    async def plan(self, run_id: str, app: str, plan: Plan, now_ms: int) -> None:
        self.plans.append((run_id, app, plan, now_ms))


@dataclass
class FakeCapture:
    """Answers each job with `outcome`, or never when `outcome` is None (until cancelled)."""

    outcome_answer: CaptureOutcome | None = None
    requested: list[Priority] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)

    async def request(self, base: BaseSnapshot, priority: Priority, ttl_ms: int) -> str:
        self.requested.append(priority)
        return f"job-{len(self.requested)}"

    async def outcome(self, job_id: str) -> CaptureOutcome:
        if self.outcome_answer is None:
            await asyncio.Event().wait()
        assert self.outcome_answer is not None
        return self.outcome_answer

    async def cancel(self, job_id: str) -> None:
        self.cancelled.append(job_id)


@dataclass
class FakeAudit:
    entries: list[dict[str, Any]] = field(default_factory=list)

    async def __call__(
        self, *, actor: str, action: str, subject: str = "", outcome: str = "", **detail: Any
    ) -> None:
        self.entries.append(
            {"actor": actor, "action": action, "subject": subject, "outcome": outcome, **detail}
        )

    def actions(self) -> list[str]:
        return [entry["action"] for entry in self.entries]


@dataclass
class Fakes:
    snapshots: FakeSnapshots = field(default_factory=FakeSnapshots)
    plugins: FakePlugins = field(default_factory=FakePlugins)
    backend: FakeBackend = field(default_factory=FakeBackend)
    notifier: FakeNotifier = field(default_factory=FakeNotifier)
    scheduler: FakeScheduler = field(default_factory=FakeScheduler)
    runs: InMemoryRuns = field(default_factory=InMemoryRuns)
    capture: FakeCapture = field(default_factory=FakeCapture)
    audit: FakeAudit = field(default_factory=FakeAudit)

    def ports(self) -> RunnerPorts:
        return RunnerPorts(
            snapshots=self.snapshots,
            plugins=self.plugins,
            backend=self.backend,
            notifier=self.notifier,
            scheduler=self.scheduler,
            runs=self.runs,
            capture=self.capture,
            audit=self.audit,
        )
