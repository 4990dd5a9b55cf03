"""Building the vision engine's screen context on a 1920x1080 desktop (Xvfb + openbox, private session
and accessibility buses): the GTK3 test form, an xterm of 100x46 showing Python source and an xterm of
log lines; the capture service as a process with vision registered as an agent (the sensor stood in
for, as in bench/capture_latency.py), against embedded NATS, Redis and PostgreSQL.

Each part alone, then the whole ContextBuilder.build as the engine wires it, with the source xterm in
front and then the form in front (capture grabs the window in front, so OCR reads what that shows):
- tree: AtspiReader.snapshot of the whole desktop;
- frame: a reduced frame of the whole screen (ScreenThumbnails.grab) and its diff with the last one;
- capture: CaptureScreenshots.focused_window, request to the redacted PNG read back;
- OCR: ScreenOcr on that PNG (the half pass, the crops, the zones' redaction);
- build: ContextBuilder.build (tree, frame, capture, OCR, pruning).
Baseline in the same run: one plain Tesseract pass over the raw 1920x1080 screen
(pytesseract.image_to_string on an mss grab), single-threaded (OMP_THREAD_LIMIT=1: the anchor; on 2 cores
Tesseract's default threads spin against each other) and, for comparison, with its default threads. A
build's CPU (this process with its Tesseract children, and the capture service with its own) is set
against the single-threaded pass's CPU, from the same run.

Then the tree read against the number of objects: the form with 10, 50, 100, 200 and 400 buttons
added through its stdin (`add LABEL`), read with no object cap (the engine's cap is 400).

Usage: python bench/vision_context.py [--builds 12] [--parts 30] [--baseline 3]
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import os
import statistics
import tempfile
import textwrap
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from _common import cpu_seconds, full_frame_ocr, machine, percentile, save, summary_ms
from kronii.foundation.clock import SystemClock
from kronii.stores.db import migrate_up
from kronii.vision.adapters.atspi import AtspiReader
from kronii.vision.adapters.capture_frames import CaptureScreenshots, ensure_key
from kronii.vision.adapters.desktop import DesktopFrames, DesktopTree
from kronii.vision.adapters.ocr import ScreenOcr
from kronii.vision.adapters.screen_thumbnail import ScreenThumbnails
from kronii.vision.core.context import Frame
from kronii.vision.core.diff import diff_score
from kronii.vision.usecases.build_context import ContextBuilder
from vision_support import (
    a11y_desktop,
    bring_to_front,
    form_as_window,
    load_average,
    move_window,
    start_capture_for_vision,
    text_xterm,
)

from tests.infra import InfraUrls, create_database, start_test_infra
from tests.integration.capture.capture_support import FakeSensor, PlantedWindow
from tests.integration.vision.vision_desktop import (
    FORM_TITLE,
    A11yDesktop,
    GtkForm,
    start_gtk_form,
    wait_for_window,
)

SCREEN = "1920x1080x24"
BUTTON_STEPS = (10, 50, 100, 200, 400)
SOURCE_TEXT = "\n".join(inspect.getsource(textwrap).splitlines()[:44])
LOG_TEXT = "\n".join(
    f"12:{n:02d}:{3 * n + 3:02d} INFO worker-{n % 4} job {1000 + n * 7} done in 0.{3 * n + 3:02d} s"
    for n in range(18)
)
T = TypeVar("T")


async def _timed(count: int, call: Callable[[], Awaitable[T]]) -> tuple[list[float], list[T]]:
    seconds, results = [], []
    for _ in range(count):
        started = time.perf_counter()
        results.append(await call())
        seconds.append(time.perf_counter() - started)
    return seconds, results


def _frame_and_diff(frames: ScreenThumbnails, count: int) -> list[float]:
    seconds, last = [], frames.grab()
    for _ in range(count):
        started = time.perf_counter()
        frame = frames.grab()
        diff_score(last, frame)
        seconds.append(time.perf_counter() - started)
        last = frame
    return seconds


def _ocr_parts(ocr: ScreenOcr, shots: list[Frame]) -> dict[str, Any]:
    readings, seconds = [], []
    for shot in shots:
        started = time.perf_counter()
        readings.append(ocr.read_detailed(shot.png))
        seconds.append(time.perf_counter() - started)
    return {
        "frame_size": list(shots[0].size),
        "ocr_total": summary_ms(seconds),
        "ocr_half_pass": summary_ms([r.half_pass_ms / 1000 for r in readings]),
        "ocr_crop_pass": summary_ms([r.crop_pass_ms / 1000 for r in readings]),
        "crops_tried_max": max(r.crops_tried for r in readings),
        "zones_p50": percentile([float(len(r.zones)) for r in readings], 0.5),
    }


def _missing(notes: tuple[str, ...]) -> tuple[str, ...]:
    """The notes that say a part of the context is missing; not the one about a window in front whose
    toolkit does not speak AT-SPI (an xterm), which is what that window is, not a failed part."""
    return tuple(note for note in notes if not note.startswith("the window in front is"))


async def _front(
    name: str,
    window: PlantedWindow,
    sensor: FakeSensor,
    screenshots: CaptureScreenshots,
    builder: ContextBuilder,
    ocr: ScreenOcr,
    count: int,
    capture_pid: int,
) -> dict[str, Any]:
    await bring_to_front(window, sensor)
    await screenshots.focused_window()  # warm-up: sign-in, Tesseract's model in capture
    capture_s, shots = await _timed(count, screenshots.focused_window)
    figures: dict[str, Any] = {"front": name, "capture": summary_ms(capture_s), **_ocr_parts(ocr, shots)}
    cpu_before = cpu_seconds(os.getpid(), capture_pid)
    build_s, builds = await _timed(count, builder.build)  # as Planning.make builds a plan's context
    figures["build_cpu_s"] = round((cpu_seconds(os.getpid(), capture_pid) - cpu_before) / count, 3)
    # A build whose capture or OCR failed (capture's own timeout, under load) still plans from the
    # tree; it is counted, with why, and left out of the timings, which are of whole builds.
    whole = [
        (s, built) for s, built in zip(build_s, builds, strict=True) if not _missing(built.context.notes)
    ]
    if not whole:
        raise RuntimeError(f"no build had every part: {builds[-1].context.notes}")
    figures["builds_without_a_part"] = len(builds) - len(whole)
    figures["why_without"] = sorted({note for built in builds for note in _missing(built.context.notes)})
    figures["build"] = summary_ms([s for s, _ in whole])
    for part in ("tree", "frame", "capture", "ocr"):
        figures[f"build_{part}"] = summary_ms([built.timings_ms[part] / 1000 for _, built in whole])
    return figures


async def _nodes_series(desktop: A11yDesktop, form: GtkForm, snapshots: int) -> list[dict[str, Any]]:
    # No object cap and a generous time budget: the series is about how the walk scales.
    reader = AtspiReader(desktop.bus_address, time_budget_s=120.0)
    await reader.connect()
    rows, added = [], 0
    try:
        for target in BUTTON_STEPS:
            for n in range(added, target):
                form.send(f"add B{n}")
            added = target
            wanted = 3 + target  # the form's own three buttons
            deadline = time.monotonic() + 30
            while sum(n.role == "push button" for n in await reader.snapshot(max_objects=100_000)) < wanted:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the form never showed {wanted} buttons in the tree")
                await asyncio.sleep(0.2)
            seconds, reads = await _timed(snapshots, lambda: reader.snapshot(max_objects=100_000))
            nodes = len(reads[-1])
            per_node = round(percentile(seconds, 0.5) * 1000 / nodes, 3)
            rows.append(
                {"buttons_added": target, "nodes": nodes, **summary_ms(seconds), "ms_per_node": per_node}
            )
    finally:
        await reader.close()
    return rows


def _table(rows: list[tuple[str, str]]) -> None:
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"  {label:<{width}}  {value}")


def _p50_p95(figure: dict[str, float]) -> str:
    return f"{figure['p50_ms']:.0f} / {figure['p95_ms']:.0f} ms"


def _print(figures: dict[str, Any]) -> None:
    rows = [
        ("tree read (whole desktop)", _p50_p95(figures["tree"])),
        ("frame grab + diff", _p50_p95(figures["frame_and_diff"])),
        ("baseline: full-frame Tesseract, one thread", _p50_p95(figures["baseline_full_frame_tesseract"])),
        (
            "baseline CPU, one thread / default threads",
            f"{figures['baseline_cpu_s_single_thread']} / {figures['baseline_cpu_s_default_threads']} s",
        ),
    ]
    for front in figures["fronts"]:
        name = front["front"]
        rows += [
            (f"[{name}] capture's redacted frame", _p50_p95(front["capture"])),
            (f"[{name}] OCR half pass + crops", _p50_p95(front["ocr_total"])),
            (f"[{name}] ContextBuilder.build", _p50_p95(front["build"])),
            (f"[{name}] build / baseline (p50)", f"{front['build_over_baseline']:.2f}"),
            (f"[{name}] build CPU / baseline CPU", f"{front['build_cpu_over_baseline_cpu']:.2f}"),
            (f"[{name}] builds left without a part", str(front["builds_without_a_part"])),
        ]
    _table(rows)
    print("  buttons  nodes  p50 ms  p95 ms  ms/node")
    for row in figures["tree_vs_nodes"]:
        print(
            f"  {row['buttons_added']:>7}  {row['nodes']:>5}  {row['p50_ms']:>6.0f}  {row['p95_ms']:>6.0f}"
            f"  {row['ms_per_node']:>7.2f}"
        )


async def _parts(desktop: A11yDesktop, parts: int) -> dict[str, Any]:
    reader = AtspiReader(desktop.bus_address)
    await reader.connect()
    try:
        nodes = await wait_for_window(reader, FORM_TITLE)
        tree_s, _ = await _timed(parts, reader.snapshot)
    finally:
        await reader.close()
    with ScreenThumbnails(desktop.display) as frames:
        frame_s = _frame_and_diff(frames, parts)
    return {"tree_nodes": len(nodes), "tree": summary_ms(tree_s), "frame_and_diff": summary_ms(frame_s)}


async def _fronts(
    infra: InfraUrls,
    database: str,
    desktop: A11yDesktop,
    windows: dict[str, PlantedWindow],
    folder: Path,
    builds: int,
) -> list[dict[str, Any]]:
    key = folder / "vision" / "vision.key"
    public = ensure_key(key)
    async with start_capture_for_vision(infra, database, desktop.display, folder, public) as capture:
        screenshots = CaptureScreenshots(capture.service.socket, key, display=desktop.display)
        ocr = ScreenOcr()
        tree = DesktopTree(AtspiReader(desktop.bus_address))
        frames = DesktopFrames(desktop.display)
        builder = ContextBuilder(tree, frames, SystemClock(), screenshots=screenshots, ocr=ocr)
        try:
            return [
                await _front(
                    name,
                    window,
                    capture.sensor,
                    screenshots,
                    builder,
                    ocr,
                    builds,
                    capture.service.proc.process.pid,
                )
                for name, window in windows.items()
            ]
        finally:
            await screenshots.close()
            await tree.close()
            frames.close()


async def run(builds: int, parts: int, baseline_runs: int) -> None:
    with (
        start_test_infra() as infra,
        a11y_desktop(SCREEN) as desktop,
        tempfile.TemporaryDirectory() as tmp,
        start_gtk_form(desktop, "Bench-s3cret-Lilac") as form,
        text_xterm(desktop.display, SOURCE_TEXT, "100x46+520+40") as source,
        text_xterm(desktop.display, LOG_TEXT, "60x20+40+420"),
    ):
        database = create_database(infra.database, "kronii_bench_vision_context")
        migrate_up(database)
        form_window = form_as_window(desktop, form)
        move_window(desktop.display, form_window.window_id, 40, 40)
        # Before ScreenOcr exists: it limits Tesseract's OpenMP threads for the whole process.
        omp_limit = os.environ.get("OMP_THREAD_LIMIT", "")
        single = [
            await asyncio.to_thread(full_frame_ocr, desktop.display, single_thread=True)
            for _ in range(baseline_runs)
        ]
        threaded = [
            await asyncio.to_thread(full_frame_ocr, desktop.display, single_thread=False)
            for _ in range(baseline_runs)
        ]
        figures: dict[str, Any] = {"machine": machine(), "load_average_at_start": load_average()}
        figures.update(screen=SCREEN, **await _parts(desktop, parts))
        windows = {"xterm 100x46 of source": source, "GTK form": form_window}
        fronts = await _fronts(infra, database, desktop, windows, Path(tmp), builds)
        series = await _nodes_series(desktop, form, max(5, parts // 3))
    base = summary_ms([wall for wall, _ in single])
    base_cpu = statistics.median(cpu for _, cpu in single)
    for front in fronts:
        front["build_over_baseline"] = round(front["build"]["p50_ms"] / base["p50_ms"], 3)
        front["build_cpu_over_baseline_cpu"] = round(front["build_cpu_s"] / base_cpu, 2)
    figures.update(
        baseline_full_frame_tesseract=base,
        baseline_cpu_s_single_thread=round(base_cpu, 3),
        baseline_full_frame_tesseract_default_threads=summary_ms([wall for wall, _ in threaded]),
        baseline_cpu_s_default_threads=round(statistics.median(cpu for _, cpu in threaded), 3),
        baseline_omp_thread_limit=omp_limit or "unset",
        fronts=fronts,
        tree_vs_nodes=series,
        load_average_at_end=load_average(),
    )
    _print(figures)
    save("vision_context", figures)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--builds", type=int, default=12)
    parser.add_argument("--parts", type=int, default=30)
    parser.add_argument("--baseline", type=int, default=3)
    args = parser.parse_args()
    print(f"vision_context: {args.builds} builds per window in front, {args.parts} reads of each part")
    asyncio.run(run(args.builds, args.parts, args.baseline))


if __name__ == "__main__":
    main()
