"""Capture on GNOME (issue 34): one window through kronii's GNOME frame source against gnome-screenshot.

A headless gnome-shell 43 (1280x800) with PipeWire and kronii's Shell extension (tests/gnome.py), and
gnome-calculator focused. In the same run, interleaved, N times each:

- kronii, one frame: `GnomeFrames.burst(count=1)`, as the capture service calls it: a mutter ScreenCast
  session recording the window by its id, its PipeWire stream read by `gst-launch-1.0`, the frame cut
  to the window;
- kronii, a burst of 3 frames 100 ms apart (the service's default burst takes 3);
- `gnome-screenshot -w -f FILE` (what a GNOME user runs for a window: gnome-shell's own Screenshot
  interface, which it allows to gnome-screenshot alone), and that PNG decoded to an RGB array (what a
  capture built on it would pay per frame before it could score it).

Wall time, and CPU per capture of everyone who works for it: the bench's own process and its children
(gst-launch, gnome-screenshot) and gnome-shell (mutter records or shoots the window in both).

gnome-screenshot is not one of kronii's dependencies (Debian's gnome-screenshot); without it the
kronii figures alone are given and the run says so.

Usage: python bench/capture_gnome.py [--runs 20]
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import psutil
from _common import ProcessMeter, machine, save, summary_ms
from kronii.capture.adapters.gnome_frames import GnomeFrames
from PIL import Image

from tests.gnome import GnomeSession, start_gnome_for_capture


def _window_id(session: GnomeSession) -> int:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        fields = session.focus_fields()
        found = re.search(r"uint64 (\d+)", fields)
        if fields.startswith("('org.gnome.Calculator'") and found:
            return int(found.group(1))
        time.sleep(0.2)
    raise RuntimeError("gnome-calculator never had the focus")


def _screenshot(session: GnomeSession, path: Path) -> None:
    subprocess.run(["gnome-screenshot", "-w", "-f", str(path)], env=session.env(), check=True, timeout=30)


def _screenshot_decoded(session: GnomeSession, path: Path) -> None:
    _screenshot(session, path)
    np.asarray(Image.open(path).convert("RGB"))


def run(runs: int) -> dict[str, Any]:
    with start_gnome_for_capture() as session, tempfile.TemporaryDirectory() as tmp:
        session.open(["gnome-calculator"])
        window_id = _window_id(session)
        time.sleep(2)  # drawn and still
        assert session.shell is not None
        meter = ProcessMeter(psutil.Process(session.shell.pid))
        frames = GnomeFrames(session.session_bus, session.env())
        frames.check()
        shot = Path(tmp) / "window.png"
        methods: dict[str, Callable[[], Any]] = {
            "kronii_one_frame": lambda: frames.burst((0, 0, 0, 0), 1, 100, window_id=window_id),
            "kronii_burst_3_at_100ms": lambda: frames.burst((0, 0, 0, 0), 3, 100, window_id=window_id),
        }
        baseline = shutil.which("gnome-screenshot") is not None
        if baseline:
            methods["gnome_screenshot_png"] = lambda: _screenshot(session, shot)
            methods["gnome_screenshot_decoded"] = lambda: _screenshot_decoded(session, shot)
        size = frames.burst((0, 0, 0, 0), 1, 100, window_id=window_id)[0].rgb.shape
        for _ in range(runs):
            order = list(methods)
            random.shuffle(order)
            for name in order:
                meter.run(name, methods[name])
    figures: dict[str, Any] = {
        "window": {"width": size[1], "height": size[0]},
        "baseline": "gnome-screenshot -w" if baseline else "not measured: gnome-screenshot is not installed",
    }
    for name in methods:
        cpu = sorted(meter.cpu[name])
        figures[name] = {**summary_ms(meter.wall[name]), "cpu_ms_p50": round(cpu[len(cpu) // 2] * 1000, 1)}
    if baseline:
        ours, theirs = figures["kronii_one_frame"], figures["gnome_screenshot_decoded"]
        figures["ratio_one_frame_vs_gnome_screenshot_decoded"] = {
            "wall_p50": round(ours["p50_ms"] / theirs["p50_ms"], 2),
            "cpu_p50": round(ours["cpu_ms_p50"] / theirs["cpu_ms_p50"], 2),
        }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    save("capture_gnome", {"machine": machine(), **run(args.runs)})


if __name__ == "__main__":
    main()
