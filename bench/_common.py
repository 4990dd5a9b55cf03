"""Shared pieces of the benchmarks: infrastructure, a desktop, a sensor process, and figures."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "bench" / "results"


def scratch_folder(prefix: str) -> Path:
    """A temporary folder for one benchmark run, removed when the process exits (a Codex home and the
    panes' files are tens of MB): set KRONII_BENCH_KEEP=1 to look at it afterwards."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    if not os.environ.get("KRONII_BENCH_KEEP"):
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def summary_ms(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50_ms": round(percentile(values, 0.50) * 1000, 2),
        "p95_ms": round(percentile(values, 0.95) * 1000, 2),
        "max_ms": round(max(values) * 1000, 2) if values else float("nan"),
        "mean_ms": round(statistics.fmean(values) * 1000, 2) if values else float("nan"),
    }


def save(name: str, figures: dict[str, Any]) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    figures = {"benchmark": name, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **figures}
    (RESULTS / f"{name}.json").write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))


def machine() -> dict[str, Any]:
    return {"cpus": os.cpu_count(), "python": sys.version.split()[0]}
