"""From an intent to what it did, end to end, on a 1920x1080 Xvfb + openbox desktop with private session
and accessibility buses: a real vision engine process (rules planner) and a real input broker, against
embedded NATS, Redis and PostgreSQL.

The conformance table (tests/integration/vision/conformance/table.py): real applications from Debian
(zenity and galculator in GTK3, gnome-calculator and gnome-text-editor in GTK4, featherpad in Qt5, a
local page in Chromium) and the intents a person would type, each judged by the tester on the app
itself (its output, its objects read by the tester's own AT-SPI reader): right, wrong element, false
done, wrong outcome, by toolkit; and for the one-action intents done right, the time from the POST of
the intent to the moment the tester first saw its effect (the tester looks every 0.1 s plus the cost
of a look: an upper bound of the first action's effect). Run with capture off,
then (unless --no-capture) with the capture service as a process, vision registered with it as an
agent and the sensor stood in for, told about each app's window as it comes up.

Then (--form-runs, 0 to skip) the single intent "click the Cancel button" on the GTK3 test form:
- engine, capture off / on: POST to the form's `CLICKED Cancel` line;
- baseline, same run: AtspiReader.do_action on the Cancel button, called directly, to the same line.

Usage: python bench/vision_intent.py [--quick] [--no-capture] [--form-runs 20]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

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
from Xlib import Xatom
from Xlib import display as xdisplay

from tests.infra import InfraUrls, create_database, start_test_infra
from tests.integration.capture.capture_support import PlantedWindow
from tests.integration.vision.conformance.apps import RunningApp
from tests.integration.vision.conformance.runner import RIGHT, AppKeeper, Result, run_case, summary
from tests.integration.vision.conformance.table import CASES
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
TABLE_SETTINGS = {**QUIET, "KRONII_VISION_ALLOWED_APPS": "terminal=xterm"}
FocusHook = Callable[[RunningApp], None]


def _first_action_timed(result: Result) -> bool:
    """A one-action intent that must be done and was: its effect is the first action's effect."""
    return result.verdict == RIGHT and result.state == "done" and " then " not in result.case.intent


def _table_runs(
    vision: VisionEngine, desktop: A11yDesktop, rounds: int, on_start: FocusHook | None
) -> dict[str, Any]:
    """Every case of the conformance table, `rounds` times, judged as the suite judges them."""
    results: list[Result] = []
    with AppKeeper(desktop, on_start) as keeper:
        for _round in range(rounds):
            for case in CASES:
                result = run_case(vision.url, keeper, case, lambda: vision.proc.output)
                results.append(result)
                print(f"    {result.verdict:14} {result.to_effect_s or 0:6.2f} s  {case.id}", flush=True)
        # What the last plan's context held (is capture's frame in it?), with the last app still up.
        context = httpx.get(f"{vision.url}/v1/vision/context", timeout=60).json()
    by_toolkit = summary(results)
    for row in by_toolkit.values():
        row["right_percent"] = round(100 * row[RIGHT] / row["cases"])
    timed = [r for r in results if _first_action_timed(r)]
    times = [r.to_effect_s for r in timed if r.to_effect_s is not None]
    times_by_toolkit = {
        toolkit: summary_ms(
            [r.to_effect_s for r in timed if r.case.toolkit == toolkit and r.to_effect_s is not None]
        )
        for toolkit in by_toolkit
    }
    return {
        "cases": len(results),
        "by_toolkit": by_toolkit,
        "intent_to_effect": summary_ms(times),
        "intent_to_effect_by_toolkit": times_by_toolkit,
        "screenshot_in_context": bool(context.get("screenshot_id")),
        "ocr_zones_in_context": len(context.get("ocr", [])),
        "context_notes": context.get("notes", []),
        "one_context_build_ms": context.get("timings_ms", {}),
        "not_right": [{"case": r.case.id, "verdict": r.verdict, "detail": r.detail} for r in results
                      if r.verdict != RIGHT],
    }  # fmt: skip


def _table_engine(
    infra: InfraUrls, database: str, desktop: A11yDesktop, folder: Path, rounds: int,
    settings: dict[str, str], on_start: FocusHook | None,
) -> dict[str, Any]:  # fmt: skip
    with start_vision(infra, database, desktop, folder, settings={**TABLE_SETTINGS, **settings}) as vision:
        return _table_runs(vision, desktop, rounds, on_start)


def wm_class(display: str, window_id: int) -> str:
    connection = xdisplay.Display(display)
    try:
        found = connection.create_resource_object("window", window_id).get_wm_class()
        return str(found[1]) if found else ""
    finally:
        connection.close()


def _front_window(display: str) -> int:
    connection = xdisplay.Display(display)
    try:
        root = connection.screen().root
        active = root.get_full_property(connection.intern_atom("_NET_ACTIVE_WINDOW"), Xatom.WINDOW)
        return int(active.value[0]) if active is not None and len(active.value) else 0
    finally:
        connection.close()


async def _table_with_capture(
    infra: InfraUrls, database: str, desktop: A11yDesktop, folder: Path, rounds: int
) -> dict[str, Any]:
    public = ensure_key(folder / "vision" / "vision.key")
    loop = asyncio.get_running_loop()
    async with start_capture_for_vision(infra, database, desktop.display, folder, public) as capture:

        def on_start(app: RunningApp) -> None:
            # The app's window, as the real sensor would report it once the window manager focused it.
            deadline = time.monotonic() + 10
            while (window_id := _front_window(desktop.display)) == 0 and time.monotonic() < deadline:
                time.sleep(0.1)
            process = cast("subprocess.Popen[bytes]", app.process)
            window = PlantedWindow(desktop.display, process, window_id, wm_class(desktop.display, window_id))
            # The app before has exited: the stand-in sensor cannot describe it as the window left.
            capture.sensor.focused = None
            asyncio.run_coroutine_threadsafe(capture.sensor.focus(window), loop).result(10)

        return await asyncio.to_thread(
            _table_engine, infra, database, desktop, folder, rounds, capture.settings(), on_start
        )


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


def _print_table(name: str, table: dict[str, Any]) -> None:
    print(f"  table, {name}: {table['cases']} cases")
    for toolkit, row in table["by_toolkit"].items():
        timing = table["intent_to_effect_by_toolkit"][toolkit]
        print(
            f"    {toolkit:9} right {row[RIGHT]}/{row['cases']} ({row['right_percent']} %), wrong element"
            f" {row['wrong element']}, false done {row['false done']}, wrong outcome {row['wrong outcome']};"
            f" intent to effect p50 {timing['p50_ms']:.0f} ms, p95 {timing['p95_ms']:.0f} ms"
        )
    whole = table["intent_to_effect"]
    print(
        f"    capture's frame in the context: {table['screenshot_in_context']}; {table['one_context_build_ms']}"
    )
    print(f"    all       intent to effect p50 {whole['p50_ms']:.0f} ms, p95 {whole['p95_ms']:.0f} ms")


def _print_form(figures: dict[str, Any]) -> None:
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


async def _form(
    infra: InfraUrls, database: str, desktop: A11yDesktop, folder: Path, runs: int
) -> dict[str, Any]:
    with start_gtk_form(desktop, "Bench-s3cret-Lilac") as form:
        window = form_as_window(desktop, form)
        move_window(desktop.display, window.window_id, 40, 40)
        await bring_to_front(window)
        direct = await _direct_runs(desktop, form, runs)
        off = folder / "form-off"
        capture_off = await asyncio.to_thread(_engine, infra, database, desktop, form, off, runs, QUIET)
        capture_on = await _with_capture(infra, database, desktop, form, folder / "form-on", runs)
    base = direct["do_action_to_clicked"]["p50_ms"]
    for engine in (capture_off, capture_on):
        engine["p50_ratio_to_direct"] = round(engine["post_to_clicked"]["p50_ms"] / base, 1)
    return {
        "intent": INTENT,
        "runs": runs,
        "direct": direct,
        "capture_off": capture_off,
        "capture_on": capture_on,
    }


async def run(rounds: int, capture: bool, form_runs: int, name: str) -> None:
    load_at_start = load_average()
    figures: dict[str, Any] = {"machine": machine(), "load_average_at_start": load_at_start, "screen": SCREEN}
    with (
        start_test_infra() as infra,
        a11y_desktop(SCREEN) as desktop,
        tempfile.TemporaryDirectory() as tmp,
    ):
        database = create_database(infra.database, "kronii_bench_vision_intent")
        migrate_up(database)
        folder = Path(tmp)
        figures["table_capture_off"] = await asyncio.to_thread(
            _table_engine, infra, database, desktop, folder / "off", rounds, {}, None
        )
        _print_table("capture off", figures["table_capture_off"])
        if capture:
            figures["table_capture_on"] = await _table_with_capture(
                infra, database, desktop, folder / "on", rounds
            )
            _print_table("capture on", figures["table_capture_on"])
        if form_runs:
            try:
                figures["form"] = await _form(infra, database, desktop, folder, form_runs)
                _print_form(figures["form"])
            except RuntimeError as exc:  # the engine's answer, kept with the table's figures
                figures["form"] = {"intent": INTENT, "error": str(exc)}
                print(f"  form: {exc}")
    figures["load_average_at_end"] = load_average()
    save(name, figures)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=1, help="times through the conformance table")
    parser.add_argument("--no-capture", action="store_true", help="the table with capture off only")
    parser.add_argument("--form-runs", type=int, default=20, help="runs of the single form intent (0: none)")
    parser.add_argument(
        "--quick", action="store_true",
        help="the table once with capture off, no form runs; results in vision_intent_quick.json",
    )  # fmt: skip
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.no_capture, args.form_runs = 1, True, 0
    print(
        f"vision_intent: the conformance table ({len(CASES)} cases) x {args.rounds}, form runs {args.form_runs}"
    )
    name = "vision_intent_quick" if args.quick else "vision_intent"
    asyncio.run(run(args.rounds, not args.no_capture, args.form_runs, name))


if __name__ == "__main__":
    main()
