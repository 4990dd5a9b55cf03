"""`kronii record` against a live bus: it writes what the sensor publishes, in the format `kronii
replay` reads, stops on SIGINT keeping what it had, and says so when no bus answers."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from kronii.activity.v1 import activity_pb2 as apb
from kronii.launcher.infra import free_port
from kronii.pipeline.adapters.recording import read_recording
from kronii.stores import subjects
from kronii.stores.bus import Bus

from tests.infra import InfraUrls

KRONII = str(Path(sys.executable).with_name("kronii"))


def _env(nats_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRONII_")}
    env["KRONII_NATS_URL"] = nats_url
    return env


async def test_record_writes_the_live_activity_that_replay_then_reads(
    infra: InfraUrls, tmp_path: Path
) -> None:
    out = tmp_path / "live.jsonl"
    recorder = subprocess.Popen(
        [KRONII, "record", "--minutes", "5", "--out", str(out)],
        env=_env(infra.nats),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert recorder.stdout is not None
        started = await asyncio.to_thread(recorder.stdout.readline)
        assert started.startswith("recording activity to"), started
        bus = Bus("test-sensor")
        await bus.connect(infra.nats)
        try:
            ide = apb.Focus(
                app_name="code", wm_class="Code", window_id=7, title="runner.py - kronii - Visual Studio Code"
            )
            await bus.publish(subjects.FOCUS_CHANGED, apb.FocusChanged(current=ide, change="app"))
            await asyncio.sleep(0.2)
            await bus.publish(subjects.TITLE_CHANGED, apb.TitleChanged(focus=ide))
            await bus.client.flush()
        finally:
            await bus.close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (not out.exists() or len(out.read_text().splitlines()) < 2):
            await asyncio.sleep(0.1)
        recorder.send_signal(signal.SIGINT)
        stdout, stderr = await asyncio.to_thread(recorder.communicate, timeout=20)
    finally:
        if recorder.poll() is None:
            recorder.kill()
    assert recorder.returncode == 0, stderr
    assert f"recorded 2 events to {out}" in stdout
    events = list(read_recording(out))
    assert [event.subject for event in events] == [
        "kronii.activity.focus_changed",
        "kronii.activity.title_changed",
    ]
    assert events[0].message.current.title.startswith("runner.py")  # type: ignore[attr-defined]
    assert events[1].offset_ms >= events[0].offset_ms

    replayed = subprocess.run([KRONII, "replay", str(out)], capture_output=True, text=True, timeout=60)
    assert replayed.returncode == 0, replayed.stderr
    assert "runs:" in replayed.stdout


def test_record_without_a_bus_exits_5_with_a_sentence(tmp_path: Path) -> None:
    result = subprocess.run(
        [KRONII, "record", "--minutes", "1", "--out", str(tmp_path / "x.jsonl")],
        env=_env(f"nats://127.0.0.1:{free_port()}"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 5
    assert "cannot reach the bus of `kronii up`" in result.stderr
    assert "Traceback" not in result.stderr
