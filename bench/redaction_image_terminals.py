"""The `terminals` section of bench/redaction_image.py: screenshots of the kinds issue 32 saw defeat image
redaction, redacted by today's pipeline and by the previous one (the pixels package at `--baseline-rev`,
loaded beside today's and run with the same text engine) in the same run.

Per screen, several xterms on one 1600x1000 Xvfb screen, captured whole (tests/integration/redaction_pixels/
terminal_cases.py): bitmap fonts 5x7 and 6x10, DejaVu Sans Mono at 6, 7 and 8 px, light and dark, values
shown by `grep --color=always` (red on dark, black on a yellow highlight), and 2x HiDPI windows (Xft.dpi 192)
with a passport's MRZ. Per window and pipeline: values readable after redaction (any 6-character piece of the
value read by Tesseract at 1x, 2x or 3x, with the bars painted in the background and as they are), the share
of the ordinary words read before that are read after, and whether the frame was withheld. Per screen: the
time per frame (median wall and CPU, Tesseract single-threaded: OMP_THREAD_LIMIT=1).
"""

from __future__ import annotations

import importlib.util
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

from kronii.redaction import RedactionEngine
from kronii.redaction.pixels import Box, ImageRedaction, redact_image

from tests.integration.redaction_pixels.terminal_cases import (
    CASES,
    Case,
    capture,
    kept_share,
    leaks,
    read_redacted,
)

ROOT = Path(__file__).resolve().parent.parent
PIXELS = "libs/redaction/src/kronii/redaction/pixels"
BASELINE_REV = "22f3f09"  # the pixels package before issue 32's image work
MORE: tuple[Case, ...] = (
    Case("bitmap-5x7-dark", "bitmap", "5x7", "dark", ("-fn", "5x7")),
    Case("bitmap-6x10-light", "bitmap", "6x10", "light", ("-fn", "6x10")),
    Case("vector-6px-light", "vector", "6px", "light", ("-fa", "DejaVu Sans Mono:pixelsize=6")),
    Case("vector-6px-dark", "vector", "6px", "dark", ("-fa", "DejaVu Sans Mono:pixelsize=6")),
    Case("vector-8px-light", "vector", "8px", "light", ("-fa", "DejaVu Sans Mono:pixelsize=8")),
    Case("grep-red-light", "bitmap", "6x13", "light", ("-fn", "6x13"), grep_colors=""),
    Case(
        "hidpi-2x-dark",
        "vector",
        "2x",
        "dark",
        ("-fa", "DejaVu Sans Mono", "-fs", "7"),
        resources=("Xft.dpi: 192",),
        mrz=True,
        columns=56,
    ),
)
SCREENS: tuple[tuple[Case, ...], ...] = (CASES, MORE)


def load_previous(rev: str) -> ModuleType:
    """The pixels package as it was at `rev`, importable beside today's as kronii.redaction.pixels_previous
    (its relative imports reach today's engine and model)."""
    listing = subprocess.run(
        ["git", "-C", str(ROOT), "ls-tree", "--name-only", f"{rev}:{PIXELS}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    folder = Path(tempfile.mkdtemp(prefix="kronii-pixels-previous-"))
    for name in listing:
        if name.endswith(".py"):
            source = subprocess.run(
                ["git", "-C", str(ROOT), "show", f"{rev}:{PIXELS}/{name}"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            (folder / name).write_text(source)
    spec = importlib.util.spec_from_file_location(
        "kronii.redaction.pixels_previous", folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _timed(run: Callable[[], ImageRedaction], runs: int) -> tuple[ImageRedaction, float, float]:
    walls, cpus, result = [], [], None
    for _ in range(runs):
        wall, cpu = time.perf_counter(), _cpu()
        result = run()
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((_cpu() - cpu) * 1000)
    assert result is not None
    return result, statistics.median(walls), statistics.median(cpus)


def _plain(lines: tuple[str, ...], values: tuple[str, ...]) -> list[str]:
    out = list(lines)
    for value in values:
        out = [line.replace(value, " ") for line in out]
    return out


def _window(before: list[str], result: ImageRedaction, box: Box, shown: Any) -> dict[str, Any]:
    if result.image is None:
        return {"withheld": True, "readable": len(shown.values), "kept": 0.0}
    after = read_redacted(result.image, result.boxes, box)
    readable = [value for value in shown.values if leaks([value], after)]
    return {
        "withheld": False,
        "readable": len(readable),
        "kept": kept_share(before, after, _plain(shown.lines, shown.values)),
    }


def terminals(engine: RedactionEngine, runs: int, baseline_rev: str = BASELINE_REV) -> dict[str, Any]:
    os.environ["OMP_THREAD_LIMIT"] = "1"
    previous = load_previous(baseline_rev)
    pipelines: dict[str, Callable[[Any], ImageRedaction]] = {
        "previous": lambda image: previous.redact_image(image, engine=engine),
        "today": lambda image: redact_image(image, engine=engine),
    }
    windows: list[dict[str, Any]] = []
    times: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for number, cases in enumerate(SCREENS):
        image, shown = capture(cases, seed=101 + number)
        for name, run in pipelines.items():
            result, wall, cpu = _timed(partial(run, image), runs)
            times[name].append((wall, cpu))
            for item in shown:
                before = read_redacted(image, [], item.box)
                row = {"pipeline": name, "case": item.case.name, "values": len(item.values)}
                row |= {"before": sum(bool(leaks([v], before)) for v in item.values)}
                row |= _window(before, result, item.box, item)
                windows.append(row)
                print(row, flush=True)
    return {
        "baseline_rev": baseline_rev,
        "windows": windows,
        "per_class": _classes(windows),
        "time": _times(times),
    }


def _classes(windows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per case class (bitmap/vector and size, theme, grep colour, HiDPI) and pipeline: values readable
    after redaction of those readable before, ordinary words kept (mean), frames withheld."""
    case_of = {case.name: case for case in (*CASES, *MORE)}
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in windows:
        case = case_of[row["case"]]
        keys = [f"{case.family} {case.size}", f"theme {case.theme}"]
        keys += ["grep colour"] if case.grep_colors is not None else []
        keys += ["HiDPI 2x"] if case.size == "2x" else []
        for key in keys:
            groups[f"{row['pipeline']}: {key}"].append(row)
    return {
        key: {
            "windows": len(rows),
            "values_readable_after": sum(row["readable"] for row in rows),
            "values_readable_before": sum(row["before"] for row in rows),
            "ordinary_words_kept": round(statistics.mean(row["kept"] for row in rows), 3),
            "withheld": sum(row["withheld"] for row in rows),
        }
        for key, rows in sorted(groups.items())
    }


def _times(times: dict[str, list[tuple[float, float]]]) -> dict[str, Any]:
    return {
        name: {
            "wall_ms_per_frame": [round(wall) for wall, _ in rows],
            "cpu_ms_per_frame": [round(cpu) for _, cpu in rows],
        }
        for name, rows in times.items()
    }
