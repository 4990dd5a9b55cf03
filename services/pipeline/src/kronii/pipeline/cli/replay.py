"""`kronii replay FILE` (a click command, the ``kronii.commands`` entry point ``replay``): a recorded
activity stream through the pipeline in this process (the core, the rules backend or a token estimate
of a model, no capture service), and a report of what it would have notified, deferred and cost.

Defining the command imports click alone: `kronii replay --help` and completing its options must not
load the runner (about 2 s). The replay itself is the use case `kronii.pipeline.usecases.replay_recording`;
`replay_events` hands it a recording's events as the triggers they stand for (api/convert)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from kronii.launcher.cli import exits

if TYPE_CHECKING:
    from kronii.llm.protocol import CallRecord as LlmCallRecord
    from kronii.pipeline.adapters.recording import RecordedEvent
    from kronii.pipeline.core.round import RunnerConfig
    from kronii.pipeline.ports import RoleBackend
    from kronii.pipeline.usecases.replay_recording import ReplayReport

__all__ = ["BACKENDS", "replay_command", "replay_events", "report_lines"]

BACKENDS = ("rules", "openai", "llamacpp")


def _load(path: str) -> list[RecordedEvent]:
    from kronii.pipeline.adapters.recording import RecordingError, read_recording

    try:
        return list(read_recording(path))
    except RecordingError as error:
        raise exits.CommandError(
            f"kronii replay: {Path(path).name} is not a kronii recording: {error}", exits.USAGE
        ) from None
    except FileNotFoundError:
        raise exits.CommandError(f"kronii replay: there is no file {path!r}", exits.NOT_FOUND) from None
    except (OSError, UnicodeDecodeError) as error:
        raise exits.CommandError(
            f"kronii replay: cannot read {path!r}: {type(error).__name__}", exits.USAGE
        ) from None


def _backend(name: str, call: bool) -> RoleBackend:
    if name == "rules":
        from kronii.pipeline.core.roles.rules import RulesBackend

        return RulesBackend()
    from kronii.pipeline.adapters.model_roles import EstimatingBackend

    if not call and name == "openai":
        return EstimatingBackend("openai")
    from kronii.foundation.settings import SettingsError, load_settings
    from kronii.pipeline.adapters.backend_factory import make_backend
    from kronii.pipeline.settings import PipelineSettings

    try:
        settings = load_settings(PipelineSettings, llm_backend=name)
    except SettingsError as error:
        sentence = error.message.replace("kronii: cannot start:", f"kronii replay --backend {name}:")
        raise exits.CommandError(sentence, exits.USAGE) from None
    try:
        return make_backend(settings, on_call=_Progress())
    except (RuntimeError, ValueError) as error:  # llama-cpp-python missing, a model file that is not there
        raise exits.CommandError(f"kronii replay --backend {name}: {error}", exits.USAGE) from None


async def replay_events(
    events: Sequence[RecordedEvent],
    backend: RoleBackend,
    *,
    realtime: bool = False,
    tick_ms: int = 300_000,
    config: RunnerConfig | None = None,
) -> ReplayReport:
    """A recording's events through the replay use case, as the triggers they stand for; as fast
    as it can, or at their pace."""
    from kronii.pipeline.api.convert import recorded_triggers
    from kronii.pipeline.usecases.replay_recording import replay_recording

    triggers = recorded_triggers(events)
    return await replay_recording(triggers, backend, realtime=realtime, tick_ms=tick_ms, config=config)


class _Progress:
    """One line on standard error per model call, as it ends: a replay with a local model takes
    minutes, and a person should see it move."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, call: LlmCallRecord) -> None:
        from kronii.pipeline.usecases.replay_recording import call_verdict

        self.calls += 1
        verdict = call_verdict(call).replace("_", " ")
        why = f"  ({call.fallback[:120]})" if call.fallback else ""
        click.echo(
            f"  call {self.calls:>3}  {call.role:<11} {verdict:<11} {call.latency_ms / 1000:6.1f} s{why}",
            err=True,
        )


def _counts(counts: dict[str, int]) -> str:
    """`notify 1, observe 2`: a count per name, for a line a person reads."""
    return ", ".join(f"{name} {count}" for name, count in sorted(counts.items())) or "none"


def _into(offset_ms: int) -> str:
    """An offset into the recording as a clock shows it (2:05, 1:02:05): the recording holds no dates."""
    minutes, seconds = divmod(offset_ms // 1000, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02}:{seconds:02}" if hours else f"{minutes}:{seconds:02}"


def _role_line(role: str, row: dict[str, Any]) -> str:
    reasons = row.get("fallback_reasons", {})
    why = f" ({_counts(reasons)})" if reasons else ""
    return (
        f"  {role:<12} {row['calls']:>4} calls  {row['input_tokens']:>7} in  {row['output_tokens']:>7} out"
        f"  first try {row['first_try']}, after retry {row['after_retry']}, rules used {row['fell_back']}{why}"
        f"  p50 {row['p50_ms'] / 1000:.1f} s  p95 {row['p95_ms'] / 1000:.1f} s"
    )


def report_lines(report: ReplayReport, backend: str) -> Iterator[str]:
    """The report as lines for a person; `--json` prints `report.as_json()` instead."""
    data = report.as_json()
    yield (
        f"replayed {report.events} events ({report.triggers} triggers, {report.duration_ms / 60_000:.1f} min"
        f" recorded) in {report.wall_secs:.2f} s"
    )
    yield f"runs: {len(report.runs)}  decisions: {_counts(data['decisions'])}"
    yield f"notified: {len(report.notified)}"
    for item in data["notified"]:
        yield f"  {'+' + _into(item['at_ms']):>8}  {item['title']}"
    yield f"deferred: {sum(report.deferred.values())} ({_counts(dict(report.deferred))})"
    yield f"title changes dropped as churn: {report.dropped_title_churn}"
    yield (
        f"cost ({backend}): {data['model_calls']} model calls, {data['input_tokens']} tokens in,"
        f" {data['output_tokens']} out"
    )
    for role, row in sorted(data["by_role"].items()):
        yield _role_line(role, row)


@click.command(
    "replay",
    help="Feed a recorded activity stream (FILE, from `kronii record`) through the pipeline in this "
    "process, and say what it would have notified, deferred and cost.",
)
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--backend",
    type=click.Choice(BACKENDS),
    default="rules",
    show_default=True,
    help="who answers the roles: the rules, or a model (openai: estimated unless --call)",
)
@click.option(
    "--call",
    is_flag=True,
    help="openai: really call the model (KRONII_PIPELINE_LLM_*), not only estimate; llamacpp always calls",
)
@click.option("--realtime", is_flag=True, help="at the recorded pace (default: as fast as it can)")
@click.option(
    "--tick-secs",
    type=click.FloatRange(min=0, min_open=True),
    default=300.0,
    show_default=True,
    help="safety-net Tick interval, in seconds",
)
@click.option("--json", "as_json", is_flag=True, help="print the report as JSON")
def replay_command(
    file: str, backend: str, call: bool, realtime: bool, tick_secs: float, as_json: bool
) -> None:
    events = _load(file)  # a missing or foreign file is said before the runner's 2 s of imports
    role_backend = _backend(backend, call)
    report = asyncio.run(
        replay_events(events, role_backend, realtime=realtime, tick_ms=int(tick_secs * 1000))
    )
    calls = call or backend == "llamacpp"
    label = backend if backend == "rules" or calls else "openai, estimated without calling"
    if as_json:
        click.echo(json.dumps({"backend": label, **report.as_json()}, indent=2))
        return
    for line in report_lines(report, label):
        click.echo(line)
