"""Runs every benchmark in bench/ in turn; each prints its figures and writes bench/results/<name>.json."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = [
    ["kronii_up.py", "--runs", "3"],
    ["redaction_text.py"],
    ["redaction_recall.py"],
    ["redaction_memory.py"],
    ["redaction_image.py"],
    ["sensor_focus.py", "--switches", "200", "--cost-seconds", "60"],
    ["sensor_focus_wayland.py", "--switches", "200", "--idle-seconds", "30"],
    ["sensor_cost.py"],
    ["capture_latency.py", "--jobs", "12", "--sustained", "12"],
    ["capture_wayland.py", "--runs", "30"],
    ["supervisor_triggers.py", "--sequential", "200", "--sustained", "1000", "--panes", "20"],
    ["orchestrator_wakes.py", "--posts", "40", "--threads", "50", "--typed", "3"],
    ["pipeline_decision.py", "--decisions", "50", "--storm", "10000"],
    ["pipeline_replay.py"],
    ["chaos_servers.py"],
    ["access_check.py"],
    ["cli_startup.py", "--runs", "7"],
    ["up_memory.py"],
    ["broker_injection.py", "--keys", "200"],
    ["broker_revocation.py", "--rounds", "20", "--keys", "200", "--stops", "10"],
    ["broker_stop.py", "--rounds", "20"],
    ["vision_context.py", "--builds", "12", "--parts", "30", "--baseline", "3"],
    ["vision_r1.py"],
    ["vision_intent.py", "--runs", "20"],
]


def main() -> int:
    failed = 0
    for argv in BENCHMARKS:
        print(f"==> {' '.join(argv)}", flush=True)
        result = subprocess.run([sys.executable, str(HERE / argv[0]), *argv[1:]], check=False)
        failed += result.returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
