"""From an intent to the first action it causes, end to end: a real vision engine process (rules
planner) and a real input broker on a 1920x1080 Xvfb + openbox desktop with private session and
accessibility buses, against embedded NATS, Redis and PostgreSQL; the GTK3 test form prints a line
for every click, so the time runs from the POST to the line the form printed.

- engine, capture off: POST /v1/vision/plans {"intent": "click the Cancel button", "execute": true}
  to `CLICKED Cancel` (the context is the tree and a reduced frame; the plan runs under the broker's
  lease, the tree read again before the click, then AT-SPI's action on the button);
- engine, capture on: the same with the capture service as a process (vision registered with it as
  an agent, the sensor stood in for), so the plan's context also holds capture's redacted frame of
  the form and its OCR zones;
- baseline, same run: AtspiReader.do_action on the Cancel button, called directly, to the same line.

Each run waits for the plan to end (the lease given back) before the next one starts.

Usage: python bench/vision_intent.py [--runs 20]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from _common import machine, save, summary_ms
from kronii.stores.db import migrate_up
from kronii.vision.adapters.atspi import AtspiReader
from kronii.vision.adapters.capture_frames import ensure_key
from vision_support import (
    a11y_desktop,
    bring_to_front,
    form_as_window,
    load_average,
    move_window,
    start_capture_for_vision,
)

from tests.infra import InfraUrls, create_database, start_test_infra
from tests.integration.vision.vision_desktop import (
    FORM_TITLE,
    A11yDesktop,
    GtkForm,
    start_gtk_form,
    wait_for_window,
)
from tests.integration.vision.vision_service_support import VisionEngine, start_vision

SCREEN = "1920x1080x24"
INTENT = "click the Cancel button"
QUIET = {"KRONII_VISION_NOTIFY": "false"}


def _clicked(line: str) -> bool:
    return line.startswith("CLICKED Cancel")


def _engine_runs(vision: VisionEngine, form: GtkForm, runs: int) -> dict[str, Any]:
    """POST to the form's line, and POST to its answer; the first run warms up and is not counted."""
    to_click, to_answer = [], []
    for run in range(runs + 1):
        started = time.perf_counter()
        response = httpx.post(
            f"{vision.url}/v1/vision/plans", json={"intent": INTENT, "execute": True}, timeout=60
        )
        answered = time.perf_counter()
        if response.status_code != 200:
            raise RuntimeError(f"the plan was refused: {response.status_code} {response.text}")
        plan = response.json()
        form.expect(_clicked, timeout_s=30)
        clicked = time.perf_counter()
        done = vision.wait_for(plan["plan_id"], timeout_s=30)
        if done["state"] != "done":
            raise RuntimeError(f"the plan ended {done['state']}: {done.get('reason')}")
        if run:
            to_click.append(clicked - started)
            to_answer.append(answered - started)
    context = httpx.get(f"{vision.url}/v1/vision/context", timeout=60).json()
    context_ms = context.get("timings_ms", {})
    return {
        "post_to_clicked": summary_ms(to_click),
        "post_to_answer": summary_ms(to_answer),
        "screenshot_in_context": bool(context.get("screenshot_id")),
        "ocr_zones_in_context": len(context.get("ocr", [])),
        "one_context_build_ms": context_ms,
    }


def _engine(
    infra: InfraUrls,
    database: str,
    desktop: A11yDesktop,
    form: GtkForm,
    folder: Path,
    runs: int,
    settings: dict[str, str],
) -> dict[str, Any]:
    """An engine started for these runs (start_vision runs an event loop of its own: call from a thread)."""
    with start_vision(infra, database, desktop, folder, settings=settings) as vision:
        return _engine_runs(vision, form, runs)


async def _direct_runs(desktop: A11yDesktop, form: GtkForm, runs: int) -> dict[str, Any]:
    reader = AtspiReader(desktop.bus_address)
    await reader.connect()
    try:
        nodes = await wait_for_window(reader, FORM_TITLE)
        cancel = next(n for n in nodes if n.role == "push button" and n.name == "Cancel")
        seconds = []
        for run in range(runs + 1):
            started = time.perf_counter()
            if not await reader.do_action(cancel.ref, "click"):
                raise RuntimeError("the Cancel button refused its click action")
            await asyncio.to_thread(form.expect, _clicked, 30)
            if run:
                seconds.append(time.perf_counter() - started)
    finally:
        await reader.close()
    return {"do_action_to_clicked": summary_ms(seconds)}


async def _with_capture(
    infra: InfraUrls, database: str, desktop: A11yDesktop, form: GtkForm, folder: Path, runs: int
) -> dict[str, Any]:
    # The engine makes this key at start if it is missing; made first here so capture knows it already.
    public = ensure_key(folder / "vision" / "vision.key")
    async with start_capture_for_vision(infra, database, desktop.display, folder, public) as capture:
        await bring_to_front(form_as_window(desktop, form), capture.sensor)
        settings = {**QUIET, **capture.settings()}
        return await asyncio.to_thread(_engine, infra, database, desktop, form, folder, runs, settings)


def _print(figures: dict[str, Any]) -> None:
    def cell(summary: dict[str, float]) -> str:
        return f"{summary['p50_ms']:8.1f} {summary['p95_ms']:8.1f}"

    print(f"  {'':44} {'p50 ms':>8} {'p95 ms':>8}")
    print(f"  {'AT-SPI do_action, direct (baseline)':44} {cell(figures['direct']['do_action_to_clicked'])}")
    for name in ("capture_off", "capture_on"):
        engine = figures[name]
        label = name.replace("_", " ")
        print(f"  {'engine, ' + label + ': POST to CLICKED':44} {cell(engine['post_to_clicked'])}")
        print(f"  {'engine, ' + label + ': POST to its answer':44} {cell(engine['post_to_answer'])}")
        print(
            f"  {'engine, ' + label + ': ratio to the baseline (p50)':44} {engine['p50_ratio_to_direct']:8.1f}"
        )


async def run(runs: int) -> None:
    load_at_start = load_average()
    with (
        start_test_infra() as infra,
        a11y_desktop(SCREEN) as desktop,
        tempfile.TemporaryDirectory() as tmp,
        start_gtk_form(desktop, "Bench-s3cret-Lilac") as form,
    ):
        database = create_database(infra.database, "kronii_bench_vision_intent")
        migrate_up(database)
        window = form_as_window(desktop, form)
        move_window(desktop.display, window.window_id, 40, 40)
        await bring_to_front(window)
        direct = await _direct_runs(desktop, form, runs)
        off = Path(tmp) / "off"
        capture_off = await asyncio.to_thread(_engine, infra, database, desktop, form, off, runs, QUIET)
        capture_on = await _with_capture(infra, database, desktop, form, Path(tmp) / "on", runs)
    base = direct["do_action_to_clicked"]["p50_ms"]
    for engine in (capture_off, capture_on):
        engine["p50_ratio_to_direct"] = round(engine["post_to_clicked"]["p50_ms"] / base, 1)
    figures = {
        "machine": machine(),
        "load_average_at_start": load_at_start,
        "load_average_at_end": load_average(),
        "screen": SCREEN,
        "intent": INTENT,
        "runs": runs,
        "direct": direct,
        "capture_off": capture_off,
        "capture_on": capture_on,
    }
    _print(figures)
    save("vision_intent", figures)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    print(f"vision_intent: {args.runs} runs of {INTENT!r} each way, after one warm-up")
    asyncio.run(run(args.runs))


if __name__ == "__main__":
    main()
