"""Replay of bench/data/activity_hour.jsonl through the pipeline in process.

Without options: the model calls and tokens the openai backend would spend (estimated, nothing is
called) against a naive design that runs the four roles on every event.

With a real model (--base-url URL --model NAME for an OpenAI-compatible server such as
`python -m llama_cpp.server --model gemma-3-270m-q4_k_m.gguf`, or --llamacpp FILE.gguf in process): the
same replay with every role call made, next to the rules backend on the same file in the same run:
calls, valid at the first try, after R2's retry, fallen back to the rules' answer, p50/p95 time per
role, the notifications of each, and the replay's wall time. Settings are the service's
(KRONII_PIPELINE_LLM_TIMEOUT_SECS and the rest), so the figures are what the service would do."""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path
from typing import Any

from _common import ROOT, machine, save
from kronii.pipeline.adapters.model_roles import EstimatingBackend
from kronii.pipeline.adapters.recording import RecordedEvent, read_recording
from kronii.pipeline.cli.replay import replay_events
from kronii.pipeline.core.roles.rules import RulesBackend
from kronii.pipeline.usecases.replay_recording import ReplayReport


def estimated(events: list[RecordedEvent], file: str) -> dict[str, Any]:
    report = asyncio.run(replay_events(events, EstimatingBackend("openai")))
    data = report.as_json()
    runs_with_calls = [r for r in report.runs if r.model_calls]
    tokens_per_round = (data["input_tokens"] + data["output_tokens"]) / max(1, len(runs_with_calls))
    naive_calls = 4 * len(events)
    return {
        "machine": machine(),
        "recording": Path(file).name,
        "recorded_minutes": round(report.duration_ms / 60_000, 1),
        "events": len(events),
        "runs": len(report.runs),
        "decisions": data["decisions"],
        "notified": len(report.notified),
        "dropped_title_churn": data["dropped_title_churn"],
        "pipeline": {
            "model_calls": data["model_calls"],
            "input_tokens": data["input_tokens"],
            "output_tokens": data["output_tokens"],
            "by_role": data["by_role"],
        },
        "naive_every_event": {
            "model_calls": naive_calls,
            "tokens_estimate": round(tokens_per_round * len(events)),
        },
        "call_reduction": round(naive_calls / max(1, data["model_calls"]), 1),
        "replay_wall_secs": data["wall_secs"],
    }


def _summary(report: ReplayReport) -> dict[str, Any]:
    data = report.as_json()
    return {
        "wall_secs": data["wall_secs"],
        "runs": data["runs"],
        "decisions": data["decisions"],
        "notified": [{"title": n["title"], "suggests": n["suggests"]} for n in data["notified"]],
        "model_calls": data["model_calls"],
        "by_role": data["by_role"],
    }


def with_model(events: list[RecordedEvent], args: argparse.Namespace) -> dict[str, Any]:
    from kronii.foundation.settings import load_settings
    from kronii.pipeline.adapters.backend_factory import make_backend
    from kronii.pipeline.settings import PipelineSettings

    if args.llamacpp:
        os.environ["KRONII_PIPELINE_LLAMACPP_MODEL_PATH"] = args.llamacpp
        settings = load_settings(PipelineSettings, llm_backend="llamacpp")
    else:
        os.environ["KRONII_PIPELINE_LLM_BASE_URL"] = args.base_url
        os.environ["KRONII_PIPELINE_LLM_MODEL"] = args.model
        settings = load_settings(PipelineSettings, llm_backend="openai")
    rules = asyncio.run(replay_events(events, RulesBackend()))
    model = asyncio.run(replay_events(events, make_backend(settings)))
    # The same suggestion may be worded by the model: what counts is what is suggested.
    rules_suggests = [n.candidate_key for n in rules.notified]
    model_suggests = [n.candidate_key for n in model.notified]
    roles = model.calls_by_role()
    total = {
        key: sum(row[key] for row in roles.values())
        for key in ("calls", "first_try", "after_retry", "fell_back")
    }
    return {
        "machine": machine(),
        "recording": Path(args.file).name,
        "backend": settings.llm_backend.value,
        "model": Path(args.llamacpp).name if args.llamacpp else args.model,
        "timeout_secs_per_role_call": settings.llm_timeout_secs,
        "output_budgets": {str(role): budget for role, budget in settings.role_budgets().items()},
        "model_run": _summary(model),
        "rules_run": _summary(rules),
        "calls": total,
        "rules_notifications_kept": all(key in model_suggests for key in rules_suggests),
        "wall_ratio_model_vs_rules": round(model.wall_secs / max(rules.wall_secs, 1e-6), 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--file", default=str(ROOT / "bench" / "data" / "activity_hour.jsonl"))
    parser.add_argument("--base-url", help="an OpenAI-compatible server to really call")
    parser.add_argument("--model", default="gemma-3-270m", help="the model name the server is asked for")
    parser.add_argument("--llamacpp", help="a GGUF file to run in process instead")
    args = parser.parse_args()
    if not Path(args.file).exists():
        print(f"no recording at {args.file}: run bench/record_activity.py first")
        return 1
    events = list(read_recording(args.file))
    if args.base_url or args.llamacpp:
        save("pipeline_replay_model", with_model(events, args))
    else:
        save("pipeline_replay", estimated(events, args.file))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
