"""How many of the screen watch's ticks R1 skips, on a recorded desktop session.

The recording: a 1920x1080 Xvfb + openbox desktop with the GTK3 test form and a terminal (xterm with
bash); a script types command lines into the terminal at a person's pace (word by word, with pauses),
some print a line, one scrolls the terminal, a second window opens and closes, the form's button is
relabelled while the terminal has the focus and again after the form was brought to the front. Every 0.5 s (the watch's
fastest cadence) the reduced frame the engine grabs (ScreenThumbnails, 240x135) is kept, with whether
the focus moved since the last tick (_NET_ACTIVE_WINDOW, what the sensor's FocusChanged reports).

The replay runs each tick through core.diff.diff_score and core.gate.should_call_model as ScreenWatch
does (the first tick only takes the base frame) and counts the ticks that would call the model,
against an engine without R1 that calls it on every tick. The recording is kept in
bench/data/vision_r1_session.npz (about 50 KB); `--record` makes a new one (about 100 s).

Usage: python bench/vision_r1.py [--record]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from _common import ROOT, machine, save
from kronii.vision.adapters.screen_thumbnail import ScreenThumbnails
from kronii.vision.core.diff import diff_score
from kronii.vision.core.gate import should_call_model
from vision_support import a11y_desktop, form_as_window, move_window, text_xterm
from Xlib import X
from Xlib import display as xdisplay

from tests.desktop import focus_window
from tests.integration.capture.capture_support import PlantedWindow
from tests.integration.vision.vision_desktop import GtkForm, start_gtk_form

SCREEN = "1920x1080x24"
TICK_S = 0.5
RECORDING = ROOT / "bench" / "data" / "vision_r1_session.npz"
MAX_KEPT_BYTES = 2 * 1024 * 1024
OTHER_WINDOW_TEXT = "\n".join(f"section {n}: notes on the release, item {n * 3}" for n in range(1, 21))


@dataclass
class Recording:
    frames: np.ndarray  # (ticks, 135, 240) uint8
    focus_changed: np.ndarray  # (ticks,) bool: the focus moved since the tick before
    times: np.ndarray  # (ticks,) seconds from the start
    event_times: np.ndarray  # when the script began each step
    event_labels: np.ndarray  # what the step was

    def label_at(self, tick: int) -> str:
        """The script's step under way at the tick."""
        begun = np.flatnonzero(self.event_times <= self.times[tick])
        return str(self.event_labels[begun[-1]]) if begun.size else "start"

    def save(self, path: Path) -> int:
        np.savez_compressed(
            path, frames=self.frames, focus_changed=self.focus_changed, times=self.times,
            event_times=self.event_times, event_labels=self.event_labels,
        )  # fmt: skip
        return path.stat().st_size

    @classmethod
    def load(cls, path: Path) -> Recording:
        with np.load(path, allow_pickle=False) as data:
            return cls(
                *(data[name] for name in ("frames", "focus_changed", "times", "event_times", "event_labels"))
            )


@dataclass
class Script:
    """The person's side of the session, run on a thread while the recorder ticks."""

    display: str
    terminal: PlantedWindow
    form: GtkForm
    form_window: PlantedWindow
    started: float
    events: list[tuple[float, str]] = field(default_factory=list)
    rng: random.Random = field(default_factory=lambda: random.Random(20261125))

    def step(self, label: str) -> None:
        self.events.append((time.monotonic() - self.started, label))

    def xdotool(self, *args: str) -> None:
        subprocess.run(
            ["xdotool", *args], env={**os.environ, "DISPLAY": self.display}, capture_output=True,
            timeout=30, check=True,
        )  # fmt: skip

    def type_line(self, line: str) -> None:
        """Word by word at 100-220 ms a key, a short hesitation between words, then Return."""
        self.step(f"typing `{line}`")
        for n, word in enumerate(line.split(" ")):
            self.xdotool("type", "--delay", str(self.rng.randint(100, 220)), (" " if n else "") + word)
            time.sleep(self.rng.uniform(0.1, 0.6))
        self.xdotool("key", "Return")

    def pause(self, label: str, seconds: float) -> None:
        self.step(label)
        time.sleep(seconds)

    def run(self) -> None:
        """Each pause is named after what came just before it: its ticks see that change."""
        self.pause("idle at the start", 4)
        self.type_line("echo checking the nightly logs")
        self.pause("after it: one line of output", 4)
        self.type_line("seq 1 80")
        self.pause("after it: a page of short lines", 5)
        self.type_line("seq -f 'job %g of the nightly run passed its checks in 3.2 s' 1 60")
        self.pause("after it: a page of long lines", 6)
        self.step("a second window opens")
        with text_xterm(self.display, OTHER_WINDOW_TEXT, "70x24+760+300") as other:
            self.pause("the second window in front", 7)
            self.step("the second window closes")
            del other
        focus_window(self.display, self.terminal.window_id)
        self.pause("back at the terminal", 3)
        self.form.send("relabel Cancel Abort")
        self.pause("after the form relabelled a button, unfocused", 5)
        self.type_line("date")
        self.pause("after it: one line of output", 6)
        focus_window(self.display, self.form_window.window_id)
        self.pause("the form brought to the front", 3)
        self.form.send("relabel Abort Cancel")
        self.pause("after the form relabelled it back, focused", 3)
        focus_window(self.display, self.terminal.window_id)
        self.pause("back at the terminal", 1)
        self.type_line("echo all jobs finished, nothing to retry")
        self.pause("after it: one line of output", 8)
        self.type_line("echo see you tomorrow")
        self.pause("after it: one line of output, then idle to the end", 10)


class FocusWatch:
    """_NET_ACTIVE_WINDOW changes on a connection of its own, drained once per tick."""

    def __init__(self, display_name: str) -> None:
        self._display: Any = xdisplay.Display(display_name)
        self._root = self._display.screen().root
        self._atom = self._display.intern_atom("_NET_ACTIVE_WINDOW")
        self._root.change_attributes(event_mask=X.PropertyChangeMask)
        self._active = self._read()

    def _read(self) -> int:
        prop = self._root.get_full_property(self._atom, X.AnyPropertyType)
        return int(prop.value[0]) if prop is not None and len(prop.value) else 0

    def moved(self) -> bool:
        """Whether another window became active since the last call."""
        touched = False
        while self._display.pending_events():
            event = self._display.next_event()
            touched |= event.type == X.PropertyNotify and event.atom == self._atom
        if not touched:
            return False
        before, self._active = self._active, self._read()
        return self._active != before

    def close(self) -> None:
        self._display.close()


def _tick_until(
    frames: ScreenThumbnails, focus: FocusWatch, started: float, done: Callable[[], bool]
) -> tuple[list[np.ndarray], list[bool], list[float]]:
    kept, moved, times = [], [], []
    tick = 0
    while not done():
        kept.append(frames.grab())
        moved.append(focus.moved())
        times.append(time.monotonic() - started)
        tick += 1
        time.sleep(max(0.0, started + tick * TICK_S - time.monotonic()))
    return kept, moved, times


def record() -> Recording:
    with (
        a11y_desktop(SCREEN) as desktop,
        start_gtk_form(desktop, "Bench-s3cret-Lilac") as form,
        text_xterm(desktop.display, "", "100x30+520+80", then_bash=True) as terminal,
    ):
        form_window = form_as_window(desktop, form)
        move_window(desktop.display, form_window.window_id, 40, 40)
        focus_window(desktop.display, terminal.window_id)
        time.sleep(1.0)
        with ScreenThumbnails(desktop.display) as frames, ThreadPoolExecutor(1) as pool:
            focus = FocusWatch(desktop.display)
            try:
                started = time.monotonic()
                script = Script(desktop.display, terminal, form, form_window, started)
                running = pool.submit(script.run)
                kept, moved, times = _tick_until(frames, focus, started, running.done)
                running.result()  # the script's own failure, if any
            finally:
                focus.close()
    return Recording(
        np.stack(kept), np.array(moved, dtype=bool), np.array(times, dtype=np.float32),
        np.array([at for at, _ in script.events], dtype=np.float32),
        np.array([label for _, label in script.events]),
    )  # fmt: skip


@dataclass
class Replay:
    ticks: int
    calls: int
    # Were the diff taken against the frame of the last call instead of the last tick (so changes that
    # come a little at a time, like typing, add up): the calls then.
    calls_against_last_call: int
    by_step: dict[str, list[int]]  # step -> [ticks, model calls, calls from focus alone]
    called: list[dict[str, Any]]  # each tick that calls the model: when, in which step, why


def replay(recording: Recording) -> Replay:
    """ScreenWatch's decisions on the recording: the first tick takes the base frame (skipped)."""
    ticks = len(recording.frames)
    by_step: dict[str, list[int]] = {}
    calls: list[dict[str, Any]] = []
    for tick in range(1, ticks):
        diff = diff_score(recording.frames[tick - 1], recording.frames[tick])
        focus = bool(recording.focus_changed[tick])
        calls_model = should_call_model(diff, focus)
        step = recording.label_at(tick)
        row = by_step.setdefault(step, [0, 0, 0])
        row[0] += 1
        row[1] += calls_model
        row[2] += calls_model and not should_call_model(diff, False)
        if calls_model:
            at = round(float(recording.times[tick]), 1)
            calls.append({"at_s": at, "step": step, "diff": round(diff, 4), "focus_moved": focus})
    return Replay(ticks, len(calls), _against_last_call(recording), by_step, calls)


def _against_last_call(recording: Recording) -> int:
    calls, reference = 0, recording.frames[0]
    for tick in range(1, len(recording.frames)):
        frame = recording.frames[tick]
        if should_call_model(diff_score(reference, frame), bool(recording.focus_changed[tick])):
            calls, reference = calls + 1, frame
    return calls


def _print(result: Replay, recording: Recording) -> None:
    print(f"  {'step of the script':<52} {'ticks':>5} {'calls':>5} {'by focus':>8}")
    for label, (ticks, calls, focus_only) in result.by_step.items():
        print(f"  {label[:52]:<52} {ticks:>5} {calls:>5} {focus_only:>8}")
    skipped = result.ticks - result.calls
    print(
        f"  ticks {result.ticks} over {recording.times[-1]:.0f} s, skipped {skipped} "
        f"({skipped / result.ticks:.1%}), model calls {result.calls} with R1 against {result.ticks} without "
        f"(x{result.ticks / max(1, result.calls):.1f})"
    )
    for call in result.called:
        why = f"diff {call['diff']:.4f}" + (" and the focus moved" if call["focus_moved"] else "")
        print(f"  a call at {call['at_s']:5.1f} s ({call['step']}): {why}")
    against = result.calls_against_last_call
    print(f"  diffing against the frame of the last call instead of the last tick: {against} calls")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--record", action="store_true", help="record a new session (about 100 s)")
    args = parser.parse_args()
    kept = ""
    if args.record or not RECORDING.exists():
        print(f"vision_r1: recording a {SCREEN} desktop session, a frame every {TICK_S} s")
        recording = record()
        size = recording.save(RECORDING)
        if size > MAX_KEPT_BYTES:
            RECORDING.unlink()  # too large to keep in the repository: made again each run
        kept = f"{size / 1024:.0f} KB" + ("" if size <= MAX_KEPT_BYTES else ", not kept")
    else:
        print(f"vision_r1: replaying {RECORDING.relative_to(ROOT)}")
        recording = Recording.load(RECORDING)
    started = time.perf_counter()
    result = replay(recording)
    replay_s = time.perf_counter() - started
    _print(result, recording)
    skipped = result.ticks - result.calls
    save(
        "vision_r1",
        {
            "machine": machine(),
            "recording": str(RECORDING.relative_to(ROOT)) + (f" (new, {kept})" if kept else ""),
            "seconds_recorded": round(float(recording.times[-1]), 1),
            "tick_s": TICK_S,
            "ticks": result.ticks,
            "skipped": skipped,
            "share_skipped": round(skipped / result.ticks, 3),
            "model_calls_with_r1": result.calls,
            "model_calls_without_r1": result.ticks,
            "ratio_without_to_with": round(result.ticks / max(1, result.calls), 2),
            "model_calls_diffing_against_the_last_call": result.calls_against_last_call,
            "focus_changes": int(recording.focus_changed.sum()),
            "replay_ms_per_tick": round(replay_s * 1000 / result.ticks, 3),
            "calls": result.called,
            "by_step": {
                label: dict(zip(("ticks", "calls", "calls_by_focus_alone"), row, strict=True))
                for label, row in result.by_step.items()
            },
        },
    )


if __name__ == "__main__":
    main()
