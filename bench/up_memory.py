"""Resident memory of the whole `kronii up` (launcher, services, embedded NATS, Redis and PostgreSQL)
once it is up and has settled, next to a bare Python interpreter measured in the same run.

RSS counts pages shared between processes once per process; PSS shares them out, so the PSS total is
what the mesh really costs the machine. Both are reported, per process and in total.

Two layouts of the services (KRONII_SERVICE_PROCESSES): "shared", the desktop default, runs them all in
one process ("services" below); "separate" runs one process per service. By default both are measured,
one after the other, and the report gives each total and the ratio shared / separate.

Goal (issue "One shape for every service"): <= 300 MB PSS on the desktop default (shared).

With --use N (shared mode), the mesh is then put to work: N failing commands reported to the critic
with `kronii run` (each recorded, redacted, embedded by the model and stored), and measured again once
a minute has passed (kronii hands freed memory back once a minute).

Usage: python bench/up_memory.py [--mode shared|separate|both] [--settle 10] [--use 20]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil
from _common import machine, save

from tests.mesh import Proc, standalone_env

GOAL_MB = 300
MB = 1024 * 1024


def _label(process: psutil.Process) -> str:
    command = " ".join(process.cmdline()[:4])
    if "kronii.runtime.service_group" in command:
        return "services"
    for service in ("sensor", "capture", "pipeline", "scheduler", "supervisor", "broker", "critic", "vision"):
        if f"kronii.{service}" in command:
            return service
    if " up" in command or command.endswith("kronii up"):
        return "launcher"
    return process.name()


def _memory(process: psutil.Process) -> tuple[float, float]:
    info = process.memory_full_info()
    return info.rss / MB, getattr(info, "pss", info.rss) / MB


def tree_memory(root: psutil.Process) -> dict[str, Any]:
    rows: dict[str, dict[str, float]] = {}
    for process in [root, *root.children(recursive=True)]:
        try:
            label, (rss, pss) = _label(process), _memory(process)
        except psutil.Error:
            continue
        row = rows.setdefault(label, {"processes": 0, "rss_mb": 0.0, "pss_mb": 0.0})
        row["processes"] += 1
        row["rss_mb"] += rss
        row["pss_mb"] += pss
    for row in rows.values():
        row["rss_mb"] = round(row["rss_mb"], 1)
        row["pss_mb"] = round(row["pss_mb"], 1)
    return {
        "by_process": dict(sorted(rows.items())),
        "total_rss_mb": round(sum(row["rss_mb"] for row in rows.values()), 1),
        "total_pss_mb": round(sum(row["pss_mb"] for row in rows.values()), 1),
    }


def bare_python_mb() -> float:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        time.sleep(1.0)
        return round(_memory(psutil.Process(child.pid))[0], 1)
    finally:
        child.kill()
        child.wait()


KRONII = str(Path(sys.executable).parent / "kronii")
# Long enough for the once-a-minute return of freed memory to have run after the work.
AFTER_USE_SECS = 70.0


def measure(mode: str, settle: float, use: int = 0) -> dict[str, Any]:
    """One `kronii up` with the services laid out as `mode`, measured once it has settled (and, with
    `use`, again a minute after that many commands went through the critic)."""
    root = Path(tempfile.mkdtemp(prefix="kronii-bench-mem-"))
    try:
        env = {**standalone_env(root / "data"), "KRONII_SERVICE_PROCESSES": mode}
        env["XDG_RUNTIME_DIR"] = str(root / "run")
        (root / "run").mkdir(mode=0o700)
        proc = Proc([KRONII, "up"], env)
        try:
            proc.wait_for_line(lambda line: line.strip() == "kronii is up", 180)
            time.sleep(settle)
            figures = tree_memory(psutil.Process(proc.process.pid))
            if use:
                _put_to_work(env, use)
                time.sleep(AFTER_USE_SECS)
                figures["after_use"] = {"commands": use, **tree_memory(psutil.Process(proc.process.pid))}
        finally:
            proc.terminate(30)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return figures


def _put_to_work(env: dict[str, str], commands: int) -> None:
    for index in range(commands):
        failing = f"echo 'error: step {index} failed at /srv/app/build.py line {index}' >&2; exit 3"
        subprocess.run([KRONII, "run", "--", "sh", "-c", failing], env=env, capture_output=True, check=False)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mode", choices=["shared", "separate", "both"], default="both")
    parser.add_argument("--settle", type=float, default=10.0, help="seconds to wait after `kronii is up`")
    parser.add_argument(
        "--use", type=int, default=20, help="commands through the critic, then measured again"
    )
    args = parser.parse_args()
    baseline = bare_python_mb()
    modes = ["shared", "separate"] if args.mode == "both" else [args.mode]
    runs = {mode: measure(mode, args.settle, args.use if mode == "shared" else 0) for mode in modes}
    for figures in runs.values():
        figures["ratio_rss_to_bare_python"] = round(figures["total_rss_mb"] / baseline, 1)
    result: dict[str, Any] = {
        "machine": machine(),
        "settle_s": args.settle,
        "bare_python_rss_mb": baseline,
        "goal_mb": GOAL_MB,
        "modes": runs,
    }
    if "shared" in runs:
        result["meets_goal"] = runs["shared"]["total_pss_mb"] <= GOAL_MB
        if "after_use" in runs["shared"]:
            result["meets_goal_after_use"] = runs["shared"]["after_use"]["total_pss_mb"] <= GOAL_MB
    if len(runs) == 2:
        result["ratio_pss_shared_to_separate"] = round(
            runs["shared"]["total_pss_mb"] / runs["separate"]["total_pss_mb"], 2
        )
        result["ratio_rss_shared_to_separate"] = round(
            runs["shared"]["total_rss_mb"] / runs["separate"]["total_rss_mb"], 2
        )
    save("up_memory", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
