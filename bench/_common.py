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
from collections.abc import Callable
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


def full_frame_ocr(display: str, *, single_thread: bool) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the Tesseract process) of one plain pass over the whole screen of
    `display`: the benchmarks' OCR baseline. Single-threaded (OMP_THREAD_LIMIT=1) is the anchor: on two
    cores Tesseract's default threads spin against each other and cost several times the CPU."""
    import resource

    import mss
    import pytesseract
    from PIL import Image

    with mss.MSS(display=display) as screen:
        shot = screen.grab(screen.monitors[1])
    image = Image.frombytes("RGB", shot.size, shot.rgb)
    before_limit = os.environ.pop("OMP_THREAD_LIMIT", None)
    if single_thread:
        os.environ["OMP_THREAD_LIMIT"] = "1"
    try:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        pytesseract.image_to_string(image)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    finally:
        os.environ.pop("OMP_THREAD_LIMIT", None)
        if before_limit is not None:
            os.environ["OMP_THREAD_LIMIT"] = before_limit
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def cpu_seconds(*pids: int) -> float:
    """The processes' CPU with that of the children they have waited for (their Tesseract runs)."""
    import psutil

    total = 0.0
    for pid in pids:
        times = psutil.Process(pid).cpu_times()
        total += times.user + times.system + times.children_user + times.children_system
    return total


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


class ProcessMeter:
    """Wall seconds and CPU seconds per call of each method: this process's, its waited-for children's and one
    other process's (the compositor that does part of the work)."""

    def __init__(self, other: Any) -> None:  # a psutil.Process
        self._other = other
        self.wall: dict[str, list[float]] = {}
        self.cpu: dict[str, list[float]] = {}

    def _cpu(self) -> float:
        import resource

        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        other = self._other.cpu_times()
        return float(time.process_time() + children.ru_utime + children.ru_stime + other.user + other.system)

    def run(self, name: str, call: Callable[[], Any]) -> None:
        cpu, started = self._cpu(), time.perf_counter()
        call()
        self.wall.setdefault(name, []).append(time.perf_counter() - started)
        self.cpu.setdefault(name, []).append(self._cpu() - cpu)
