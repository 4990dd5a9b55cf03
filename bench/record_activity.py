"""Record a scripted hour of a developer's desktop under Xvfb, as the real sensor reports it.

A seeded script drives real X clients (xterms with the WM_CLASS and titles of an IDE, a browser, a
terminal, a chat app and a meeting app) through openbox: focus switches with realistic dwell times,
title changes (files opened, pages visited, commands run, a build whose progress rewrites the title
many times a second), input to keep the session active, a coffee break long enough to go idle, and a
screen lock. The sensor runs as a process against embedded NATS/Redis/PostgreSQL; every activity
event it publishes is written as one JSON line:

    {"offset_ms": 1234, "subject": "kronii.activity.focus_changed",
     "type": "kronii.activity.v1.FocusChanged", "event": {...protobuf as JSON...}}

The pipeline's benchmark replays the file (bench/data/activity_hour.jsonl) through `kronii replay`.

Usage: python bench/record_activity.py [--minutes 60] [--out bench/data/activity_hour.jsonl] [--seed 7]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from _common import ROOT
from google.protobuf import json_format
from google.protobuf.message import Message
from kronii.activity.v1 import activity_pb2
from kronii.launcher.infra import free_port
from kronii.stores import subjects
from kronii.stores.bus import Bus
from kronii.stores.db import migrate_up

from tests.desktop import emit_screensaver_active, start_session_bus, start_xvfb, stop_process
from tests.infra import start_test_infra
from tests.mesh import Proc, python_module, wait_http_ready

IDLE_THRESHOLD_SECS = 300
# Imported for its side effect: the activity types are in the descriptor pool (recordings name their type).
ACTIVITY_TYPES = activity_pb2.DESCRIPTOR


@dataclass
class App:
    key: str
    wm_class: str
    titles: list[str]
    window_id: int = 0
    process: subprocess.Popen[bytes] | None = None


APPS = [
    App(
        "ide",
        "Code",
        [
            "service.py - kronii - Visual Studio Code",
            "machine.py - kronii - Visual Studio Code",
            "test_machine.py - kronii - Visual Studio Code",
            "README.md - kronii - Visual Studio Code",
            "• app.py - kronii - Visual Studio Code",
            "settings.py - kronii - Visual Studio Code",
        ],
    ),
    App(
        "browser",
        "firefox",
        [
            "Pull request #142 · kronii/kronii — Mozilla Firefox",
            "asyncio — Asynchronous I/O — Python 3.11 documentation — Mozilla Firefox",
            "python - How to cancel an asyncio task - Stack Overflow — Mozilla Firefox",
            "Issues · kronii/kronii — Mozilla Firefox",
            "NATS Docs - JetStream — Mozilla Firefox",
        ],
    ),
    App(
        "terminal",
        "kitty",
        [
            "dev@workstation: ~/src/kronii",
            "pytest -q tests/unit",
            "git status",
            "git diff --stat",
            "make lint",
            "vim services/pipeline/app.py",
        ],
    ),
    App(
        "chat", "Slack", ["Slack | #kronii-dev | Acme", "Slack | Maria Garcia | Acme", "Slack | #ops | Acme"]
    ),
    App("meeting", "zoom", ["Zoom Meeting", "Sprint planning - Zoom Meeting"]),
]


def _xdotool(display: str, *args: str) -> None:
    subprocess.run(
        ["xdotool", *args], env={**os.environ, "DISPLAY": display}, check=True, capture_output=True
    )


def _open(display: str, app: App, lifetime_s: int) -> None:
    app.process = subprocess.Popen(
        [
            "xterm",
            "-class",
            app.wm_class,
            "-name",
            app.wm_class.lower(),
            "-T",
            app.titles[0],
            "-e",
            "sleep",
            str(lifetime_s),
        ],
        env={**os.environ, "DISPLAY": display},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    out = subprocess.run(
        ["xdotool", "search", "--sync", "--onlyvisible", "--class", f"^{app.wm_class}$"],
        env={**os.environ, "DISPLAY": display},
        check=True,
        capture_output=True,
        text=True,
        timeout=20,
    ).stdout
    app.window_id = int(out.split()[0])


def _plan(rng: random.Random, minutes: float) -> Iterator[tuple[str, App | None, float]]:
    """(action, app, seconds) steps of a working hour: mostly IDE/terminal/browser, a meeting at the
    middle, a build storm, a coffee break (idle) and a lock near the end."""
    total = minutes * 60
    weights = {"ide": 5, "terminal": 4, "browser": 3, "chat": 1}
    by_key = {app.key: app for app in APPS}
    elapsed = 0.0
    milestones = {
        "storm": total * 0.2,
        "meeting": total * 0.45,
        "break": total * 0.65,
        "lock": total * 0.85,
    }
    done: set[str] = set()
    while elapsed < total:
        due = [name for name, at in milestones.items() if at <= elapsed and name not in done]
        if due:
            name = due[0]
            done.add(name)
            if name == "storm":
                yield ("storm", by_key["terminal"], 20.0)
                elapsed += 20
            elif name == "meeting":
                span = min(total * 0.12, 600.0)
                yield ("meeting", by_key["meeting"], span)
                elapsed += span
            elif name == "break":
                span = max(IDLE_THRESHOLD_SECS + 60.0, total * 0.1)
                yield ("idle", None, span)
                elapsed += span
            else:
                span = min(180.0, total * 0.05)
                yield ("lock", None, span)
                elapsed += span
            continue
        key = rng.choices(list(weights), weights=list(weights.values()))[0]
        dwell = min(rng.lognormvariate(3.3, 0.8), 240.0)
        yield ("work", by_key[key], dwell)
        elapsed += dwell


async def _work(display: str, app: App, seconds: float, rng: random.Random) -> None:
    _xdotool(display, "windowactivate", "--sync", str(app.window_id))
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if rng.random() < 0.35:
            title = rng.choice(app.titles)
            _xdotool(display, "set_window", "--name", title, str(app.window_id))
        _xdotool(display, "mousemove_relative", "--", "1", "1")
        await asyncio.sleep(min(rng.uniform(2.0, 12.0), max(0.0, end - time.monotonic())))


async def _storm(display: str, app: App, seconds: float) -> None:
    """A build that prints its progress into the terminal's title ten times a second."""
    _xdotool(display, "windowactivate", "--sync", str(app.window_id))
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        n += 1
        _xdotool(
            display, "set_window", "--name", f"cargo build [{n % 100:>3}%] compiling", str(app.window_id)
        )
        await asyncio.sleep(0.1)
    _xdotool(display, "set_window", "--name", app.titles[0], str(app.window_id))


async def run(minutes: float, out: Path, seed: int) -> None:
    rng = random.Random(seed)
    lifetime = int(minutes * 60 + 600)
    counts: Counter[str] = Counter()
    with (
        start_xvfb(screen="1280x800x24") as display,
        start_session_bus() as bus_address,
        start_test_infra() as infra,
    ):
        migrate_up(infra.database)
        http = free_port()
        env = dict(os.environ)
        env.update(infra.env())
        env.update(
            DISPLAY=display,
            DBUS_SESSION_BUS_ADDRESS=bus_address,
            KRONII_DATA_DIR=tempfile.mkdtemp(prefix="kronii-record-"),
            KRONII_SENSOR_HTTP_PORT=str(http),
            KRONII_SENSOR_GRPC_PORT=str(free_port()),
            KRONII_SENSOR_IDLE_THRESHOLD_SECS=str(IDLE_THRESHOLD_SECS),
            KRONII_LOG_LEVEL="WARNING",
        )
        for app in APPS:
            _open(display, app, lifetime)
        sensor = Proc(python_module("kronii.sensor"), env)
        bus = Bus("record")
        await bus.connect(infra.nats)
        out.parent.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        with out.open("w", encoding="utf-8") as sink:

            async def on_event(subject: str, message: Message) -> None:
                line = {
                    "offset_ms": round((time.monotonic() - started) * 1000),
                    "subject": subject,
                    "type": message.DESCRIPTOR.full_name,
                    "event": json_format.MessageToDict(message, preserving_proto_field_name=True),
                }
                sink.write(json.dumps(line, ensure_ascii=False) + "\n")
                sink.flush()
                counts[subject.rsplit(".", 1)[-1]] += 1

            await bus.subscribe_any(subjects.ACTIVITY_ALL, on_event)
            await bus.client.flush()
            try:
                wait_http_ready(f"http://127.0.0.1:{http}", proc=sensor)
                for action, step_app, seconds in _plan(rng, minutes):
                    done = round(time.monotonic() - started)
                    print(
                        f"[{done // 60:02d}:{done % 60:02d}] {action} {step_app.key if step_app else ''} {seconds:.0f} s",
                        flush=True,
                    )
                    if action in ("work", "meeting") and step_app is not None:
                        await _work(display, step_app, seconds, rng)
                    elif action == "storm" and step_app is not None:
                        await _storm(display, step_app, seconds)
                    elif action == "idle":
                        await asyncio.sleep(seconds)
                    elif action == "lock":
                        emit_screensaver_active(bus_address, True)
                        await asyncio.sleep(seconds)
                        emit_screensaver_active(bus_address, False)
                        _xdotool(display, "mousemove_relative", "--", "1", "1")
                        await asyncio.sleep(2)
                await asyncio.sleep(1)
            except BaseException:
                print(sensor.output[-3000:])
                raise
            finally:
                await bus.close()
                sensor.terminate()
                for app in APPS:
                    if app.process is not None:
                        stop_process(app.process)
    print(f"wrote {sum(counts.values())} events to {out.relative_to(ROOT)}: {dict(counts)}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "data" / "activity_hour.jsonl")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    asyncio.run(run(args.minutes, args.out.resolve(), args.seed))


if __name__ == "__main__":
    main()
