"""Replay of bench/data/activity_hour.jsonl through the pipeline in process: the model calls and
tokens the openai backend would spend (estimated, nothing is called) against a naive design that
runs the four roles on every event."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from _common import ROOT, machine, save
from kronii.pipeline.adapters.recording import read_recording
from kronii.pipeline.cli import replay_events
from kronii.pipeline.model_roles import EstimatingBackend


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--file", default=str(ROOT / "bench" / "data" / "activity_hour.jsonl"))
    args = parser.parse_args()
    if not Path(args.file).exists():
        print(f"no recording at {args.file}: run bench/record_activity.py first")
        return 1
    events = list(read_recording(args.file))
    report = asyncio.run(replay_events(events, EstimatingBackend("openai")))
    data = report.as_json()
    runs_with_calls = [r for r in report.runs if r.model_calls]
    tokens_per_round = (data["input_tokens"] + data["output_tokens"]) / max(1, len(runs_with_calls))
    naive_calls = 4 * len(events)
    save(
        "pipeline_replay",
        {
            "machine": machine(),
            "recording": Path(args.file).name,
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
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
