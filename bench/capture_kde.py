"""Capture on KDE Plasma (issue 34): one window through kronii's KDE frame source against spectacle.

A headless KWin 5.27 (1280x800, llvmpipe) on a private session bus (tests/kde.py), kronii's grant given
(`kronii capture kde allow`), and galculator focused. In the same run, interleaved, N times each:

- kronii, one frame: `KdeFrames.burst(count=1)`, as the capture service calls it: kronii's interpreter
  copy started with kronii.desktop.kwin_screenshot, one ScreenShot2 CaptureActiveWindow, the frame read
  back and turned into RGB;
- kronii, a burst of 3 frames 100 ms apart (the service's default burst takes 3);
- the helper's floor: the interpreter copy started and dbus-fast imported, nothing asked of KWin (what
  one process per burst costs before any frame);
- `spectacle -b -n -a -o FILE` (KDE's own screenshot tool, which KWin authorises, taking the active
  window in the background), and that PNG decoded to an RGB array.

Wall time, and CPU per capture of everyone who works for it: the bench's process, its children and KWin.
spectacle is not one of kronii's dependencies (Debian's kde-spectacle); without it the kronii figures
alone are given and the run says so.

Usage: python bench/capture_kde.py [--runs 20]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import psutil
from _common import ProcessMeter, machine, save, summary_ms
from kronii.capture.adapters.kde_frames import KdeFrames
from kronii.desktop.kwin_screenshot import grant_for
from kronii.desktop.session import probe
from kronii.sensor.adapters.kwin import KdeDisplay
from kronii.sensor.core.model import Focus
from PIL import Image

from tests.kde import KWin, start_kwin
from tests.wayland import CLIENTS


def _focused_window(kwin: KWin) -> int:
    seen: list[Focus] = []
    display = KdeDisplay(probe(kwin.env()), address=kwin.session_bus)
    display.start(seen.append)
    try:
        kwin.open(CLIENTS[1])
        deadline = time.monotonic() + 20
        while not (seen and seen[-1].wm_class.lower() == "galculator"):
            if time.monotonic() > deadline:
                raise RuntimeError("galculator never had the focus")
            time.sleep(0.1)
        return seen[-1].window_id
    finally:
        display.close()


def _allow(kwin: KWin) -> None:
    kronii = str(Path(sys.executable).parent / "kronii")
    subprocess.run([kronii, "capture", "kde", "allow"], env=kwin.env(), check=True, capture_output=True)


def _first_burst(frames: KdeFrames, window_id: int) -> tuple[int, ...]:
    """KWin reads the new desktop file within seconds: the first burst once it does."""
    deadline = time.monotonic() + 20
    while True:
        try:
            return frames.burst((0, 0, 0, 0), 1, 100, window_id=window_id)[0].rgb.shape
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def _floor(kwin: KWin) -> None:
    env = {**kwin.env(), "PYTHONPATH": os.pathsep.join(path for path in sys.path if path)}
    interpreter = str(grant_for(kwin.env()).interpreter)
    subprocess.run([interpreter, "-c", "import dbus_fast.aio"], env=env, check=True)


def _spectacle_decoded(kwin: KWin, path: Path) -> None:
    subprocess.run(
        ["spectacle", "-b", "-n", "-a", "-o", str(path)], env=kwin.env(), check=True, timeout=30,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    np.asarray(Image.open(path).convert("RGB"))


def run(runs: int) -> dict[str, Any]:
    with start_kwin() as kwin, tempfile.TemporaryDirectory() as tmp:
        _allow(kwin)
        window_id = _focused_window(kwin)
        time.sleep(2)  # drawn and still
        assert kwin.process is not None
        meter = ProcessMeter(psutil.Process(kwin.process.pid))
        frames = KdeFrames(kwin.session_bus, kwin.env())
        frames.check()
        size = _first_burst(frames, window_id)
        shot = Path(tmp) / "window.png"
        methods: dict[str, Callable[[], Any]] = {
            "kronii_one_frame": lambda: frames.burst((0, 0, 0, 0), 1, 100, window_id=window_id),
            "kronii_burst_3_at_100ms": lambda: frames.burst((0, 0, 0, 0), 3, 100, window_id=window_id),
            "helper_floor_start_and_import": lambda: _floor(kwin),
        }
        baseline = shutil.which("spectacle") is not None
        if baseline:
            methods["spectacle_decoded"] = lambda: _spectacle_decoded(kwin, shot)
        for _ in range(runs):
            order = list(methods)
            random.shuffle(order)
            for name in order:
                meter.run(name, methods[name])
    figures: dict[str, Any] = {
        "window": {"width": size[1], "height": size[0]},
        "baseline": "spectacle -b -n -a" if baseline else "not measured: spectacle is not installed",
    }
    for name in methods:
        cpu = sorted(meter.cpu[name])
        figures[name] = {**summary_ms(meter.wall[name]), "cpu_ms_p50": round(cpu[len(cpu) // 2] * 1000, 1)}
    if baseline:
        ours, theirs = figures["kronii_one_frame"], figures["spectacle_decoded"]
        figures["ratio_one_frame_vs_spectacle_decoded"] = {
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
    save("capture_kde", {"machine": machine(), **run(args.runs)})


if __name__ == "__main__":
    main()
