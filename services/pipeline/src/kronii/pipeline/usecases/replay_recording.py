"""What `kronii replay` runs: a recorded activity stream (as the triggers it stands for, api/convert's
`recorded_triggers`) through a Runner in this process (the core, a role backend, no capture service)
and the report of what it would have notified, deferred and cost.

Replay plays the scheduler's part too: a Tick at every wake-up a Planner asked for and a safety-net
Tick every `tick_ms`, so a long recording does not stay in Cooling or Deferred for want of one."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kronii.pipeline.core.answers import Admit
from kronii.pipeline.core.budget import PluginContent
from kronii.pipeline.core.commands import RecordedTrigger
from kronii.pipeline.core.roles.values import Notification, Plan
from kronii.pipeline.core.round import RunnerConfig
from kronii.pipeline.core.router import BaseSnapshot, PluginInfo
from kronii.pipeline.core.runs import ModelCall, RunRecord
from kronii.pipeline.core.states import Trigger, TriggerKind
from kronii.pipeline.ports import RoleBackend, RunnerPorts
from kronii.pipeline.usecases.in_process import InMemoryRuns, NoCapture, no_audit
from kronii.pipeline.usecases.runner import Runner

__all__ = ["EPOCH_MS", "ReplayReport", "call_verdict", "replay_recording"]

# Recordings start at offset 0; runs are dated from this epoch so their times read as times.
EPOCH_MS = 1_700_000_000_000
_STEP_MS = 250


@dataclass
class _Focus:
    """The Base snapshot replay keeps from the recorded focus, state and lock events."""

    base: BaseSnapshot = field(default_factory=lambda: BaseSnapshot(at_ms=EPOCH_MS))

    def observe(self, trigger: Trigger) -> None:
        if trigger.kind in (TriggerKind.FOCUS_CHANGED, TriggerKind.TITLE_CHANGED):
            self.base = BaseSnapshot(
                at_ms=trigger.at_ms,
                activity_state=self.base.activity_state,
                app=trigger.app,
                wm_class=trigger.wm_class,
                title=trigger.title,
                window_id=trigger.window_id,
                locked=self.base.locked,
            )
        elif trigger.kind is TriggerKind.STATE_CHANGED and trigger.to_state:
            self.base = BaseSnapshot(**{**_fields(self.base), "activity_state": trigger.to_state})
        elif trigger.kind in (TriggerKind.LOCK_START, TriggerKind.LOCK_END):
            self.base = BaseSnapshot(
                **{**_fields(self.base), "locked": trigger.kind is TriggerKind.LOCK_START}
            )

    async def latest(self) -> BaseSnapshot | None:
        return self.base


def _fields(base: BaseSnapshot) -> dict[str, Any]:
    return {name: getattr(base, name) for name in base.__slots__}


class _NoPlugins:
    async def infos(self) -> Sequence[PluginInfo]:
        return ()

    async def pull(self, app_ids: Sequence[str], full: bool, run_id: str) -> Sequence[PluginContent]:
        return ()


@dataclass
class _Notified:
    at_ms: int
    run_id: str
    title: str
    body: str
    # What it suggests (`related_tasks:main.py@kronii`): a model may word a notification its own way.
    candidate_key: str = ""


class _CollectingNotifier:
    def __init__(self, clock: _VirtualClock) -> None:
        self._clock = clock
        self.sent: list[_Notified] = []

    async def muted(self, source_key: str) -> str | None:
        return None

    async def notify(
        self, run_id: str, notification: Notification, source_key: str, accept_label: str = ""
    ) -> str:
        self.sent.append(
            _Notified(
                self._clock.now_ms, run_id, notification.title, notification.body, notification.candidate_key
            )
        )
        return f"replay-{len(self.sent)}"


class _LocalScheduler:
    """No scheduler answers admissions (the core's limits decide); planned wake-ups are kept so
    replay can fire their Ticks."""

    def __init__(self) -> None:
        self.wakeups: list[int] = []

    async def admit(self, app: str, trigger: Trigger) -> Admit | None:
        return None

    async def plan(self, run_id: str, app: str, plan: Plan, now_ms: int) -> None:
        self.wakeups.append(plan.next_wakeup_ms)


class _VirtualClock:
    """Replay's clock: moved by the replay, the same time on both scales."""

    def __init__(self) -> None:
        self.now_ms = EPOCH_MS

    def wall(self) -> float:
        return self.now_ms / 1000

    def monotonic(self) -> float:
        return self.now_ms / 1000

    def wall_ms(self) -> int:
        return self.now_ms

    def monotonic_ms(self) -> int:
        return self.now_ms


_ROLE_COUNTS = ("calls", "input_tokens", "output_tokens", "first_try", "after_retry", "fell_back")


def call_verdict(call: ModelCall) -> str:
    """How a role call ended: the model's answer valid at its first try or after R2's retry, or
    the rules' answer used instead (the model failed, timed out, or was overruled)."""
    if call.outcome != "ok" or call.fallback.startswith(("overruled", "invalid_output")):
        return "fell_back"
    return "first_try" if call.attempts <= 1 else "after_retry"


@dataclass
class ReplayReport:
    events: int = 0
    triggers: int = 0
    runs: list[RunRecord] = field(default_factory=list)
    notified: list[_Notified] = field(default_factory=list)
    duration_ms: int = 0
    dropped_title_churn: int = 0
    wall_secs: float = 0.0

    @property
    def deferred(self) -> Counter[str]:
        return Counter(
            r.decision.removeprefix("deferred:") for r in self.runs if r.decision.startswith("deferred")
        )

    def calls_by_role(self) -> dict[str, dict[str, Any]]:
        roles: dict[str, dict[str, Any]] = {}
        latencies: dict[str, list[int]] = {}
        for run in self.runs:
            for call in run.model_calls:
                row = roles.setdefault(call.role, dict.fromkeys(_ROLE_COUNTS, 0))
                row["calls"] += 1
                row["input_tokens"] += call.input_tokens
                row["output_tokens"] += call.output_tokens
                row[call_verdict(call)] += 1
                if call.fallback:
                    reasons = row.setdefault("fallback_reasons", {})
                    reason = call.fallback.split(":", 1)[0]
                    reasons[reason] = reasons.get(reason, 0) + 1
                latencies.setdefault(call.role, []).append(call.latency_ms)
        for role, row in roles.items():
            ordered = sorted(latencies[role])
            row["p50_ms"] = ordered[(len(ordered) - 1) // 2]
            row["p95_ms"] = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        return roles

    def as_json(self) -> dict[str, Any]:
        roles = self.calls_by_role()
        return {
            "events": self.events,
            "triggers": self.triggers,
            "recorded_ms": self.duration_ms,
            "runs": len(self.runs),
            "decisions": dict(Counter(r.decision for r in self.runs)),
            "notified": [
                {"at_ms": n.at_ms - EPOCH_MS, "title": n.title, "body": n.body, "suggests": n.candidate_key}
                for n in self.notified
            ],
            "deferred": dict(self.deferred),
            "dropped_title_churn": self.dropped_title_churn,
            "model_calls": sum(r["calls"] for r in roles.values()),
            "input_tokens": sum(r["input_tokens"] for r in roles.values()),
            "output_tokens": sum(r["output_tokens"] for r in roles.values()),
            "by_role": roles,
            "cost_estimate": round(sum(r.cost_estimate for r in self.runs), 6),
            "wall_secs": round(self.wall_secs, 3),
        }


class _Replay:
    """A Runner on in-process parts and a virtual clock, with the scheduler's Ticks played in."""

    def __init__(
        self, backend: RoleBackend, config: RunnerConfig | None, tick_ms: int, realtime: bool
    ) -> None:
        self.clock = _VirtualClock()
        self.focus = _Focus()
        self.notifier = _CollectingNotifier(self.clock)
        self.scheduler = _LocalScheduler()
        self.runs = InMemoryRuns()
        ports = RunnerPorts(
            snapshots=self.focus,
            plugins=_NoPlugins(),
            backend=backend,
            notifier=self.notifier,
            scheduler=self.scheduler,
            runs=self.runs,
            capture=NoCapture(),
            audit=no_audit,
        )
        self.runner = Runner(ports, self.clock, config)
        self.tick_ms = tick_ms
        self.realtime = realtime
        self.started = time.monotonic()
        self.next_safety_tick = EPOCH_MS + tick_ms

    async def run_until(self, target_ms: int) -> None:
        while self.clock.now_ms < target_ms:
            await self._tick_if_due()
            await self.runner.advance()
            self.clock.now_ms = min(target_ms, self.clock.now_ms + self._step(target_ms))
            if self.realtime:
                await self._keep_pace()

    async def _tick_if_due(self) -> None:
        now_ms = self.clock.now_ms
        due = [w for w in self.scheduler.wakeups if w <= now_ms]
        if due or now_ms >= self.next_safety_tick:
            self.scheduler.wakeups = [w for w in self.scheduler.wakeups if w > now_ms]
            self.next_safety_tick = now_ms + self.tick_ms
            await self.runner.submit(Trigger(TriggerKind.TICK, now_ms))

    def _step(self, target_ms: int) -> int:
        if self.runner.status()["pending_batches"]:
            return _STEP_MS
        # Nothing pending: jump to the next moment something can happen.
        upcoming = [target_ms, self.next_safety_tick, *self.scheduler.wakeups]
        return max(1, min(upcoming) - self.clock.now_ms)

    async def _keep_pace(self) -> None:
        await asyncio.sleep(max(0.0, self.started + (self.clock.now_ms - EPOCH_MS) / 1000 - time.monotonic()))

    async def feed(self, event: RecordedTrigger) -> bool:
        """Play the recording up to `event`, then submit it; False when it is no trigger."""
        await self.run_until(EPOCH_MS + event.offset_ms)
        if event.command is None:
            return False
        trigger = event.command.at(self.clock.now_ms)
        self.focus.observe(trigger)
        await self.runner.submit(trigger)
        await self.runner.advance()
        return True


async def replay_recording(
    events: Sequence[RecordedTrigger],
    backend: RoleBackend,
    *,
    realtime: bool = False,
    tick_ms: int = 300_000,
    config: RunnerConfig | None = None,
) -> ReplayReport:
    """Feed `events` through a Runner with in-process parts; as fast as it can, or at their pace."""
    replay = _Replay(backend, config, tick_ms, realtime)
    report = ReplayReport(events=len(events))
    for event in events:
        if await replay.feed(event):
            report.triggers += 1
    last = events[-1].offset_ms if events else 0
    await replay.run_until(EPOCH_MS + last + 2 * (config or RunnerConfig()).coalesce_window_ms)
    report.runs = sorted(replay.runs.records.values(), key=lambda r: r.created_at)
    report.notified = replay.notifier.sent
    report.duration_ms = last
    report.dropped_title_churn = replay.runner.dropped_title_churn
    report.wall_secs = time.monotonic() - replay.started
    return report
