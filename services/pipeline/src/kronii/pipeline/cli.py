"""`kronii replay FILE` and `kronii record`: a recorded activity stream through the pipeline in
this process (the core, the rules backend or a token estimate of a model, no capture service),
and the live bus of a running `kronii up` into such a file.

Replay plays the scheduler's part too: a Tick at every wake-up a Planner asked for and a safety-net
Tick every `--tick-secs`, so a long recording does not stay in Cooling or Deferred for want of one."""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kronii.common.cli import exits
from kronii.common.settings import SettingsError
from kronii.pipeline.adapters.llm import CallRecord as LlmCallRecord
from kronii.pipeline.adapters.recording import RecordedEvent, RecordingError, read_recording
from kronii.pipeline.adapters.runs_store import RunRecord
from kronii.pipeline.api.convert import trigger_from_message
from kronii.pipeline.core.budget import PluginContent
from kronii.pipeline.core.router import BaseSnapshot, PluginInfo
from kronii.pipeline.core.states import Trigger, TriggerKind
from kronii.pipeline.roles.backend import RoleBackend
from kronii.pipeline.roles.model import Notification, Plan
from kronii.pipeline.roles.rules import RulesBackend
from kronii.pipeline.runner import Admit, InMemoryRuns, Runner, RunnerConfig, RunnerPorts

__all__ = [
    "ReplayReport",
    "add_record_parser",
    "add_replay_parser",
    "replay_events",
    "run_record",
    "run_replay",
]

# Recordings start at offset 0; runs are dated from this epoch so their times read as times.
_EPOCH_MS = 1_700_000_000_000
_STEP_MS = 250


class ReplayError(Exception):
    """A sentence for the person at the terminal, and its exit code (kronii.common.cli.exits)."""

    def __init__(self, message: str, code: int = exits.USAGE) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class _Focus:
    """The Base snapshot replay keeps from the recorded focus, state and lock events."""

    base: BaseSnapshot = field(default_factory=lambda: BaseSnapshot(at_ms=_EPOCH_MS))

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

    async def notify(self, run_id: str, notification: Notification, source_key: str) -> str:
        self.sent.append(
            _Notified(
                self._clock(), run_id, notification.title, notification.body, notification.candidate_key
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
    def __init__(self) -> None:
        self.now_ms = _EPOCH_MS

    def __call__(self) -> int:
        return self.now_ms


_ROLE_COUNTS = ("calls", "input_tokens", "output_tokens", "first_try", "after_retry", "fell_back")


def call_verdict(call: LlmCallRecord) -> str:
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
                {"at_ms": n.at_ms - _EPOCH_MS, "title": n.title, "body": n.body, "suggests": n.candidate_key}
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


async def replay_events(
    events: Sequence[RecordedEvent],
    backend: RoleBackend,
    *,
    realtime: bool = False,
    tick_ms: int = 300_000,
    config: RunnerConfig | None = None,
) -> ReplayReport:
    """Feed `events` through a Runner with in-process parts; as fast as it can, or at their pace."""
    clock = _VirtualClock()
    focus = _Focus()
    notifier = _CollectingNotifier(clock)
    scheduler = _LocalScheduler()
    runs = InMemoryRuns()
    ports = RunnerPorts(
        snapshots=focus,
        plugins=_NoPlugins(),
        backend=backend,
        notifier=notifier,
        scheduler=scheduler,
        runs=runs,
    )
    runner = Runner(ports, clock, config)
    report = ReplayReport(events=len(events))
    started = time.monotonic()
    next_safety_tick = _EPOCH_MS + tick_ms

    async def run_until(target_ms: int) -> None:
        nonlocal next_safety_tick
        while clock.now_ms < target_ms:
            due = [w for w in scheduler.wakeups if w <= clock.now_ms]
            if due or clock.now_ms >= next_safety_tick:
                scheduler.wakeups = [w for w in scheduler.wakeups if w > clock.now_ms]
                next_safety_tick = clock.now_ms + tick_ms
                await runner.submit(Trigger(TriggerKind.TICK, clock.now_ms))
            await runner.advance()
            if runner.status()["pending_batches"]:
                step = _STEP_MS
            else:  # nothing pending: jump to the next moment something can happen
                upcoming = [target_ms, next_safety_tick, *scheduler.wakeups]
                step = max(1, min(upcoming) - clock.now_ms)
            clock.now_ms = min(target_ms, clock.now_ms + step)
            if realtime:
                await asyncio.sleep(max(0.0, started + (clock.now_ms - _EPOCH_MS) / 1000 - time.monotonic()))

    for event in events:
        await run_until(_EPOCH_MS + event.offset_ms)
        trigger = trigger_from_message(event.message, clock.now_ms)
        if trigger is None:
            continue
        report.triggers += 1
        focus.observe(trigger)
        await runner.submit(trigger)
        await runner.advance()
    last = events[-1].offset_ms if events else 0
    await run_until(_EPOCH_MS + last + 2 * (config or RunnerConfig()).coalesce_window_ms)
    report.runs = sorted(runs.records.values(), key=lambda r: r.created_at)
    report.notified = notifier.sent
    report.duration_ms = last
    report.dropped_title_churn = runner.dropped_title_churn
    report.wall_secs = time.monotonic() - started
    return report


def _load(path: str) -> list[RecordedEvent]:
    try:
        return list(read_recording(path))
    except RecordingError as error:
        raise ReplayError(f"kronii replay: {Path(path).name} is not a kronii recording: {error}") from None
    except FileNotFoundError:
        raise ReplayError(f"kronii replay: there is no file {path!r}", exits.NOT_FOUND) from None
    except (OSError, UnicodeDecodeError) as error:
        raise ReplayError(f"kronii replay: cannot read {path!r}: {type(error).__name__}") from None


def _backend(name: str, call: bool) -> RoleBackend:
    if name == "rules":
        return RulesBackend()
    from kronii.pipeline.model_roles import EstimatingBackend

    if not call and name == "openai":
        return EstimatingBackend("openai")
    from kronii.common.settings import load_settings
    from kronii.pipeline.backends import make_backend
    from kronii.pipeline.settings import PipelineSettings

    try:
        settings = load_settings(PipelineSettings, llm_backend=name)
    except SettingsError as error:
        raise ReplayError(
            error.message.replace("kronii: cannot start:", f"kronii replay --backend {name}:")
        ) from None
    try:
        return make_backend(settings, on_call=_Progress())
    except (RuntimeError, ValueError) as error:  # llama-cpp-python missing, a model file that is not there
        raise ReplayError(f"kronii replay --backend {name}: {error}") from None


class _Progress:
    """One line on standard error per model call, as it ends: a replay with a local model takes
    minutes, and a person should see it move."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, call: LlmCallRecord) -> None:
        self.calls += 1
        verdict = call_verdict(call).replace("_", " ")
        why = f"  ({call.fallback[:120]})" if call.fallback else ""
        print(
            f"  call {self.calls:>3}  {call.role:<11} {verdict:<11} {call.latency_ms / 1000:6.1f} s{why}",
            file=sys.stderr,
            flush=True,
        )


def _print(report: ReplayReport, backend: str, as_json: bool) -> None:
    data = report.as_json()
    if as_json:
        print(json.dumps({"backend": backend, **data}, indent=2))
        return
    minutes = report.duration_ms / 60_000
    print(
        f"replayed {report.events} events ({report.triggers} triggers, {minutes:.1f} min recorded) in {report.wall_secs:.2f} s"
    )
    print(f"runs: {len(report.runs)}  decisions: {data['decisions']}")
    print(f"notified: {len(report.notified)}")
    for item in report.notified:
        print(f"  +{(item.at_ms - _EPOCH_MS) / 1000:8.1f} s  {item.title}")
    deferred = ", ".join(f"{reason} {count}" for reason, count in sorted(report.deferred.items())) or "none"
    print(f"deferred: {sum(report.deferred.values())} ({deferred})")
    print(f"title changes dropped as churn: {report.dropped_title_churn}")
    print(
        f"cost ({backend}): {data['model_calls']} model calls, {data['input_tokens']} tokens in, {data['output_tokens']} out"
    )
    for role, row in sorted(data["by_role"].items()):
        print(
            f"  {role:<12} {row['calls']:>4} calls  {row['input_tokens']:>7} in  {row['output_tokens']:>7} out"
            f"  first try {row['first_try']}, after retry {row['after_retry']}, rules used {row['fell_back']}"
            f"  p50 {row['p50_ms'] / 1000:.1f} s  p95 {row['p95_ms'] / 1000:.1f} s"
        )


def run_replay(args: argparse.Namespace) -> int:
    try:
        events = _load(args.file)
        backend = _backend(args.backend, args.call)
        report = asyncio.run(
            replay_events(events, backend, realtime=args.realtime, tick_ms=int(args.tick_secs * 1000))
        )
    except ReplayError as error:
        print(str(error), file=sys.stderr)
        return error.code
    calls = args.call or args.backend == "llamacpp"
    label = args.backend if args.backend == "rules" or calls else "openai, estimated without calling"
    _print(report, label, args.json)
    return 0


def add_replay_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "replay", help="feed a recorded activity stream through the pipeline in this process"
    )
    parser.add_argument("file", help="a recording (JSON lines from `kronii record`)")
    parser.add_argument(
        "--realtime", action="store_true", help="at the recorded pace (default: as fast as it can)"
    )
    parser.add_argument("--backend", choices=("rules", "openai", "llamacpp"), default="rules")
    parser.add_argument(
        "--call",
        action="store_true",
        help="openai: really call the model (KRONII_PIPELINE_LLM_*), not only estimate; llamacpp always calls",
    )
    parser.add_argument(
        "--tick-secs", type=float, default=300.0, help="safety-net Tick interval (default 300)"
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(handler=run_replay)
    return parser


# ---- record -----------------------------------------------------------------------------------


class BusUnreachable(Exception):
    """The bus of `kronii up` does not answer."""


async def _record(out: str, minutes: float, stop: asyncio.Event) -> int:
    from kronii.common.bus import Bus
    from kronii.common.status import infra_url
    from kronii.pipeline.adapters.recording import record_from_bus

    bus = Bus("record")
    try:
        await asyncio.wait_for(bus.connect(infra_url("nats"), connect_timeout=3), 5)
    except Exception as error:
        raise BusUnreachable(
            f"kronii record: cannot reach the bus of `kronii up` ({type(error).__name__}); is it running?"
        ) from None
    try:
        return await record_from_bus(
            bus,
            out,
            minutes * 60,
            stop=stop,
            ready=lambda: print(
                f"recording activity to {out} for {minutes:g} min; Ctrl-C stops early and keeps what it has",
                flush=True,
            ),
        )
    finally:
        await bus.close()


def run_record(args: argparse.Namespace) -> int:
    if args.minutes <= 0:
        print("kronii record: --minutes must be more than 0", file=sys.stderr)
        return 2

    async def main() -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        return await _record(args.out, args.minutes, stop)

    try:
        count = asyncio.run(main())
    except BusUnreachable as error:
        print(str(error), file=sys.stderr)
        return exits.UNREACHABLE
    except SettingsError as error:
        print(error.message, file=sys.stderr)
        return exits.USAGE
    except OSError as error:
        print(f"kronii record: cannot write {args.out!r}: {error.strerror}", file=sys.stderr)
        return 2
    print(f"recorded {count} events to {args.out}")
    return 0


def add_record_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "record", help="write the live activity of a running `kronii up` to a file for `kronii replay`"
    )
    parser.add_argument("--minutes", type=float, default=10.0, help="how long to record (default 10)")
    parser.add_argument("--out", default="activity.jsonl", help="where (default activity.jsonl)")
    parser.set_defaults(handler=run_record)
    return parser
