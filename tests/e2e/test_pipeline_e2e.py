"""The pipeline with the real sensor and the real capture service on a real desktop (Xvfb +
openbox, xterms, xdotool, a private session bus): focus on an IDE file runs the whole table and
notifies on NATS and SSE; a screen lock during a run defers it; a route that needs a screenshot
waits in AwaitingCapture for the capture service and goes on with what it returned."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kronii.pipeline.adapters.plugin_host import PluginHost
from kronii.pipeline.v1 import pipeline_pb2 as pb
from kronii.stores import subjects
from kronii.stores.bus import Bus

from tests.desktop import emit_screensaver_active, focus_window, open_window, stop_process
from tests.infra import InfraUrls
from tests.integration.capture.capture_support import CaptureProc, capture_env, start_capture
from tests.integration.pipeline.pipeline_support import (
    Pipeline,
    SseReader,
    pipeline_database,
    pipeline_env,
    start_pipeline,
)
from tests.mesh import Proc, start_service, wait_until

pytestmark = pytest.mark.e2e

FULL_PATH = [
    "idle",
    "collecting",
    "routing",
    "redacting",
    "extracting",
    "synthesizing",
    "planning",
    "acting",
    "cooling",
]


@dataclass
class Mesh:
    sensor: Proc
    capture: CaptureProc
    pipeline: Pipeline
    infra: InfraUrls


@pytest.fixture(scope="module")
def mesh(
    infra: InfraUrls, xdisplay: str, session_bus: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Mesh]:
    database = pipeline_database(infra, "e2e")
    data_dir: Path = tmp_path_factory.mktemp("pipeline-e2e")
    sensor_env = capture_env(infra, database, data_dir, None)
    sensor_env.update(
        DISPLAY=xdisplay,
        DBUS_SESSION_BUS_ADDRESS=session_bus,
        KRONII_SENSOR_TICK_INTERVAL_SECS="0.2",
        DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
    )
    with (
        start_service("sensor", sensor_env, timeout=60) as sensor,
        start_capture(capture_env(infra, database, data_dir, xdisplay)) as capture,
    ):
        env = pipeline_env(
            infra,
            database,
            data_dir,
            KRONII_PIPELINE_CAPTURE_ENABLED="true",
            KRONII_PIPELINE_CAPTURE_SOCKET_DIR=str(capture.socket.parent),
            KRONII_PIPELINE_CAPTURES_PER_APP_PER_10MIN="100",
            KRONII_PIPELINE_CAPTURES_GLOBAL_PER_HOUR="100",
            KRONII_PIPELINE_CAPTURE_TTL_MS="20000",
            KRONII_PIPELINE_PLUGIN_TIMEOUT_SECS="5",
        )
        with start_pipeline(env) as pipeline:
            yield Mesh(sensor.proc, capture, pipeline, infra)


def _newer(after: float) -> Any:
    return lambda run: run["created_at"] > after


def test_focus_on_an_ide_file_runs_every_state_and_notifies_on_nats_and_sse(
    mesh: Mesh, xdisplay: str
) -> None:
    sse = SseReader(mesh.pipeline.url).start()
    seen: list[pb.Notification] = []
    started = time.time()

    async def watch() -> None:
        bus = Bus("e2e-notify")
        await bus.connect(mesh.infra.nats)

        async def on_note(_subject: str, message: pb.Notification) -> None:
            seen.append(message)

        await bus.subscribe(subjects.NOTIFY, on_note)
        # The window manager gives a new window the focus: the sensor reports it at once.
        code = await asyncio.to_thread(
            open_window, xdisplay, "machine.py - kronii - Visual Studio Code", "Code"
        )
        try:
            await asyncio.to_thread(focus_window, xdisplay, code.window_id)
            for _ in range(300):
                if seen:
                    break
                await asyncio.sleep(0.1)
        finally:
            code.close()
            await bus.close()

    asyncio.run(watch())
    run = mesh.pipeline.wait_for_run(lambda r: r["decision"] == "notify" and r["created_at"] > started, 30)
    assert [visit["state"] for visit in run["states"]] == FULL_PATH
    assert (
        seen and seen[0].title == "Related tasks for machine.py in kronii" and seen[0].run_id == run["run_id"]
    )
    wait_until(lambda: bool(sse.events), 10, "the notification on the SSE stream")
    assert sse.events[0]["id"] == run["notification_id"]


class _SlowEditorPlugin:
    """A plugin for the editor whose summary takes 3 s: the run sits in Collecting meanwhile."""

    @property
    def registration(self) -> pb.PluginRegistration:
        return pb.PluginRegistration(
            app_id="vscode",
            display_name="Editor",
            risk_score=0.1,
            capabilities=pb.PluginCapabilities(summarize=True),
        )

    async def snapshot(self, request: pb.PluginSnapshotRequest) -> pb.PluginSnapshot:
        await asyncio.sleep(3.0)
        return pb.PluginSnapshot(app_id="vscode", summary="3 unsaved files", redaction_level="green")


def test_a_screen_lock_during_a_run_defers_it(mesh: Mesh, xdisplay: str, session_bus: str) -> None:
    pipeline = mesh.pipeline

    async def scenario() -> None:
        bus = Bus("e2e-plugin")
        await bus.connect(mesh.infra.nats)
        host = PluginHost(bus, _SlowEditorPlugin(), snapshot_timeout_secs=10)
        await host.start()
        try:
            await asyncio.to_thread(
                wait_until,
                lambda: any(p["app_id"] == "vscode" for p in pipeline.get("/v1/plugins")["plugins"]),
                10,
                "the editor plugin's registration",
            )
            with open_window(xdisplay, "parser.py - kronii - Visual Studio Code", "Code2", "code") as code:
                await asyncio.to_thread(focus_window, xdisplay, code.window_id)
                await asyncio.to_thread(
                    wait_until,
                    lambda: (
                        pipeline.get("/v1/state")["state"] == "collecting"
                        and pipeline.get("/v1/state")["run_id"] is not None
                    ),
                    20,
                    "a run pulling the editor plugin",
                )
                await asyncio.to_thread(emit_screensaver_active, session_bus, True)
                deferred = await asyncio.to_thread(
                    pipeline.wait_for_run, lambda r: r["decision"].startswith("deferred"), 20
                )
                assert deferred["decision"] == "deferred:locked"
                assert [v["state"] for v in deferred["states"]] == [
                    "idle", "collecting", "routing", "collecting", "routing", "deferred",
                ]  # fmt: skip
                assert sum(len(r["model_calls"]) for r in [deferred]) == 0
        finally:
            await host.stop()
            await bus.close()
            await asyncio.to_thread(emit_screensaver_active, session_bus, False)

    asyncio.run(scenario())
    # LockEnd resumes: a round runs again (seed row 3) once the lock is gone.
    resumed = pipeline.wait_for_run(
        lambda r: "lock_end" in r["trigger_summary"], 30, "the round after LockEnd"
    )
    assert resumed["states"][0]["state"] == "deferred"


def test_a_route_that_needs_a_screenshot_waits_for_the_capture_service(mesh: Mesh, xdisplay: str) -> None:
    pipeline = mesh.pipeline
    wait_until(
        lambda: pipeline.get("/v1/state")["state"] in ("idle", "cooling", "deferred"), 30, "a quiet pipeline"
    )
    started = time.time()
    # An editor without a file in its title: the text cannot say what is on screen.
    with open_window(xdisplay, "Visual Studio Code", "Code3", "code") as code:
        focus_window(xdisplay, code.window_id)
        run = pipeline.wait_for_run(
            lambda r: _newer(started)(r) and any(v["state"] == "awaiting_capture" for v in r["states"]), 60
        )
    path = [v["state"] for v in run["states"]]
    waited = path.index("awaiting_capture")
    assert path[waited + 1] == "redacting" and path[-1] in ("cooling", "deferred")
    assert "screencapture" in run["plugins_used"]
    notes = pipeline.get("/v1/state")["recent_notes"][run["run_id"]]
    assert "capture persisted" in notes, notes


PRIVATE_KEY_SCREEN = """-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
QyNTUxOQAAACBq0bKzW8mT4dZ2yq3Xc7v3nPm1bT8x0c0w6QkC5w8o1AAAAJgN3hxpDd4c
aQAAAAtzc2gtZWQyNTUxOQAAACBq0bKzW8mT4dZ2yq3Xc7v3nPm1bT8x0c0w6QkC5w8o1A
-----END OPENSSH PRIVATE KEY-----
"""


# Each half is proven in the default suite, in-process or against one real service:
# tests/integration/pipeline/test_pipeline_capture_degrade.py::test_a_rejected_capture_degrades_the_round_and_it_goes_on
# (the pipeline degrades a rejected capture and goes on), tests/integration/redaction_pixels/test_pixels_withheld.py
# ::test_a_private_key_on_screen_withholds_the_image (real Tesseract: a private key on screen is withheld) and
# tests/unit/capture/test_capture_job_use_case.py::test_a_frame_redaction_refuses_ends_the_job_rejected_with_nothing_stored.
@pytest.mark.slow
def test_a_capture_the_redaction_rejects_degrades_the_round(
    mesh: Mesh, xdisplay: str, tmp_path: Path
) -> None:
    """The real capture service refuses a frame showing a private key (red): the round does not wait
    for ever and does not stop; it degrades to the other context (seed: AwaitingCapture, rejected)."""
    pipeline = mesh.pipeline
    wait_until(
        lambda: pipeline.get("/v1/state")["state"] in ("idle", "cooling", "deferred"), 30, "a quiet pipeline"
    )
    key_file = tmp_path / "id_ed25519"
    key_file.write_text(PRIVATE_KEY_SCREEN)
    started = time.time()
    editor = subprocess.Popen(
        [
            "xterm",
            "-class",
            "Code4",
            "-name",
            "code",
            "-fa",
            "DejaVu Sans Mono",
            "-fs",
            "12",
            "-T",
            "Visual Studio Code",
            "-e",
            "sh",
            "-c",
            f"cat '{key_file}'; sleep 600",
        ],
        env={**os.environ, "DISPLAY": xdisplay},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        window = subprocess.run(
            ["xdotool", "search", "--sync", "--onlyvisible", "--class", "^Code4$"],
            env={**os.environ, "DISPLAY": xdisplay},
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        ).stdout.split()[0]
        time.sleep(1.0)  # drawn
        focus_window(xdisplay, int(window))
        try:
            run = pipeline.wait_for_run(
                lambda r: _newer(started)(r) and any(v["state"] == "awaiting_capture" for v in r["states"]),
                60,
            )
        except Exception:
            print(
                [(r["trigger_summary"], r["route"], r["decision"], r["notes"]) for r in pipeline.runs()][:8]
            )
            print(pipeline.proc.output[-3000:])
            raise
    finally:
        stop_process(editor)
    path = [v["state"] for v in run["states"]]
    waited = path.index("awaiting_capture")
    assert path[waited + 1] == "redacting" and path[-1] in ("cooling", "deferred"), path
    assert "capture rejected: degraded to the other context" in run["notes"], run["notes"]
    assert not any("BEGIN OPENSSH" in note for note in run["notes"])
