"""Capture on sway (issue 34): one window's region, kronii's in-process wlr-screencopy against grim.

A headless sway (1280x800, the pixman renderer) with two foot windows of text side by side; the region
is the right-hand window's rectangle as sway reports it (640x800 at 640,0). In the same run, interleaved,
N times each:

- in process, one connection kept (what a burst does after its first frame: the pool is reused);
- in process, a new connection per frame (connect, bind, copy, close: a burst's first frame);
- a burst as the capture service takes it (WaylandFrames: the focused rect from sway's IPC, then 3
  frames with no pause between them);
- `grim -g "x,y wxh" -` as a process (a PNG on stdout), and that PNG decoded to an RGB array (what a
  grim-based capture would pay per frame before it could score it), and `grim -t ppm` (no PNG
  compression: the process and the copy alone).

Every copy, whoever asks, waits for the compositor's next frame of the output (wlroots copies when it
renders; the headless output runs at 60 Hz): up to 16.7 ms of any figure here is that wait, and where in
the frame period a measurement starts decides how much of it it pays. Each measurement therefore
starts at a random point of the period, the same way for every method.

Usage: python bench/capture_wayland.py [--runs 30]
"""

from __future__ import annotations

import argparse
import io
import random
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _common import machine, save, summary_ms
from kronii.capture.adapters.wayland_frames import WaylandFrames
from kronii.desktop.wayland_screencopy import ScreenCopy
from PIL import Image

from tests.integration.capture.capture_support import PLANTED_TEXT
from tests.wayland import Sway, foot_showing, start_sway, wait_until_still

_FRAME_S = 1 / 60  # the headless output's refresh
_phase = random.Random(34)


def timed(action: Callable[[], object]) -> float:
    """One run of `action`, started at a random point of the compositor's frame period (after 20 to
    37 ms of quiet), so that no method always starts right after the frame the one before it used."""
    time.sleep(_phase.uniform(0.020, 0.020 + _FRAME_S))
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def grim(sway: Sway, region: str, kind: str) -> Callable[[], bytes]:
    env = sway.env()

    def run() -> bytes:
        return subprocess.run(
            ["grim", "-t", kind, "-g", region, "-"], env=env, capture_output=True, check=True
        ).stdout

    return run


def grim_decoded(sway: Sway, region: str) -> Callable[[], object]:
    png = grim(sway, region, "png")
    return lambda: np.asarray(Image.open(io.BytesIO(png())).convert("RGB"))


def measure(sway: Sway, rect: dict[str, int], runs: int) -> dict[str, list[float]]:
    x, y, width, height = rect["x"], rect["y"], rect["width"], rect["height"]
    region = f"{x},{y} {width}x{height}"
    source = WaylandFrames(sway.socket, "sway", ipc=sway.ipc)
    samples: dict[str, list[float]] = {
        "in_process_kept": [],
        "in_process_new": [],
        "burst_3": [],
        "grim_png": [],
        "grim_png_decoded": [],
        "grim_ppm": [],
    }

    def fresh() -> object:
        with ScreenCopy(sway.socket) as screen:
            return screen.region(x, y, width, height)

    with ScreenCopy(sway.socket) as kept:
        kept.region(x, y, width, height)  # warm-up: the pool exists
        grim(sway, region, "png")()
        for _ in range(runs):
            samples["in_process_kept"].append(timed(lambda: kept.region(x, y, width, height)))
            samples["in_process_new"].append(timed(fresh))
            samples["burst_3"].append(timed(lambda: source.burst(source.geometry(0), 3, 0)))
            samples["grim_png"].append(timed(grim(sway, region, "png")))
            samples["grim_png_decoded"].append(timed(grim_decoded(sway, region)))
            samples["grim_ppm"].append(timed(grim(sway, region, "ppm")))
    return samples


def run(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, start_sway() as sway:
        text = Path(tmp) / "text.txt"
        text.write_text("\n".join([PLANTED_TEXT] * 3))
        sway.open(foot_showing(text, "kronii-bench-left"))
        sway.open(foot_showing(text, "kronii-bench-right"))
        sway.focus("kronii-bench-right")
        rect = next(w["rect"] for w in sway.windows() if w["app_id"] == "kronii-bench-right")
        wait_until_still(sway, rect)
        samples = measure(sway, rect, runs)
    summaries = {name: summary_ms(values) for name, values in samples.items()}
    figures: dict[str, Any] = {
        "machine": machine(),
        "session": "headless sway 1.7 (pixman), 1280x800, two foot windows of text",
        "region": f"{rect['width']}x{rect['height']} at {rect['x']},{rect['y']}",
        "runs": runs,
        **summaries,
        "grim_png_over_in_process_kept_p50": round(
            summaries["grim_png"]["p50_ms"] / summaries["in_process_kept"]["p50_ms"], 1
        ),
        "grim_png_over_in_process_new_p50": round(
            summaries["grim_png"]["p50_ms"] / summaries["in_process_new"]["p50_ms"], 1
        ),
        "grim_png_decoded_over_in_process_new_p50": round(
            summaries["grim_png_decoded"]["p50_ms"] / summaries["in_process_new"]["p50_ms"], 1
        ),
        "grim_ppm_over_in_process_new_p50": round(
            summaries["grim_ppm"]["p50_ms"] / summaries["in_process_new"]["p50_ms"], 1
        ),
    }
    save("capture_wayland", figures)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=30)
    run(parser.parse_args().runs)


if __name__ == "__main__":
    main()
