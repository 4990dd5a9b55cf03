"""`kronii capture request|watch|get|list` as a person runs it, against the capture service over its
Unix socket: exit codes, what it prints, the PNG it writes, and sentences for what went wrong.
`request` runs without a terminal (any local process of the user may ask for a capture); `list` and
`get` read screenshots, so they run on a real pseudo-terminal, the person's proof of presence."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from kronii.foundation.urls import libpq_url
from PIL import Image

from tests.integration.capture.capture_support import (
    CaptureProc,
    FakeSensor,
    PlantedWindow,
    TerminalRun,
    planted_window,
    run_on_terminal,
)

KRONII = str(Path(sys.executable).with_name("kronii"))


@pytest.fixture(scope="module")
def notes(x_display: str) -> Iterator[PlantedWindow]:
    with planted_window(x_display) as window:
        yield window


async def kronii(
    service: CaptureProc, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    command = [KRONII, "capture", "--socket", str(service.socket), "--timeout", "60", *args]
    return await asyncio.to_thread(
        subprocess.run, command, capture_output=True, text=True, timeout=90, env=env or dict(os.environ)
    )


async def kronii_on_terminal(service: CaptureProc, *commands: str) -> TerminalRun:
    """`kronii capture --socket S <command>` for each command, one after the other, from one shell on
    a real pseudo-terminal; each is followed by `rc=<exit code>`."""
    prefix = f"'{KRONII}' capture --socket '{service.socket}' --timeout 60"
    script = "; ".join(f"{prefix} {command}; echo rc=$?" for command in commands)
    return await asyncio.to_thread(run_on_terminal, script, dict(os.environ))


def audit_rows(database: str, subject: str) -> list[tuple[str, str, str, dict[str, Any]]]:
    with psycopg.connect(libpq_url(database)) as conn:
        rows = conn.execute(
            "SELECT action, outcome, actor, detail FROM audit_log WHERE subject = %s ORDER BY id", (subject,)
        ).fetchall()
    return [(row[0], row[1], row[2], row[3]) for row in rows]


async def test_request_wait_prints_the_progression_and_get_writes_the_redacted_png(
    capture_service: CaptureProc,
    sensor: FakeSensor,
    notes: PlantedWindow,
    tmp_path: Path,
    capture_database: str,
) -> None:
    await sensor.focus(notes)
    requested = await kronii(
        capture_service,
        "request",
        "--pid",
        str(notes.pid),
        "--window",
        hex(notes.window_id),
        "--app",
        notes.wm_class,
        "--requester",
        "it.cli",
        "--wait",
    )
    assert requested.returncode == 0, requested.stdout + requested.stderr
    lines = requested.stdout.splitlines()
    job_id = lines[0].strip()
    assert [line.split()[1] for line in lines[1:]] == [
        "queued",
        "waiting",
        "capturing",
        "scoring",
        "redacting",
        "persisted",
    ]
    screenshot_id = lines[-1].split()[-1]

    out = tmp_path / "shot.png"
    piped = tmp_path / "piped.png"
    # `--`: a screenshot id may begin with "-".
    shell = await kronii_on_terminal(
        capture_service,
        "list -n 5 --json",
        "list -n 5",
        f"get job:{job_id} '{out}'",
        f"get -o - -- {screenshot_id} > '{piped}'",
    )
    assert shell.shown.count("rc=0") == 4, shell.shown
    listed = json.loads(next(line for line in shell.shown.splitlines() if line.startswith("[{")))
    assert {"screenshot_id": screenshot_id, "job_id": job_id, "redaction_level": "amber"}.items() <= listed[
        0
    ].items()
    assert any(line.startswith(screenshot_id) and job_id in line for line in shell.shown.splitlines()), (
        shell.shown
    )
    assert any(line.split()[:3] == ["ID", "CREATED", "APP"] for line in shell.shown.splitlines()), shell.shown
    assert "redacted PNG" in shell.shown
    image = Image.open(io.BytesIO(out.read_bytes()))
    assert image.format == "PNG" and image.width > 100
    assert piped.read_bytes() == out.read_bytes()

    # Every access is an audit row naming the local client by pid and executable, with the level.
    reads = [row for row in audit_rows(capture_database, screenshot_id) if row[0] == "capture.get_screenshot"]
    assert len(reads) == 2
    for _, outcome, _, detail in reads:
        assert outcome == "ok"
        assert detail["client_kind"] == "local" and detail["pid"] > 0 and detail["exe"]
        assert detail["redaction_level"] == "amber"
        assert detail["proof"] in ("tty", "window")  # a person's proof, or its window still open
    assert any(row[0] == "capture.request" for row in audit_rows(capture_database, job_id))


async def test_an_unknown_screenshot_is_not_found_with_exit_code_3_and_a_sentence(
    capture_service: CaptureProc, tmp_path: Path
) -> None:
    got = await kronii_on_terminal(capture_service, f"get no-such-screenshot-id -o '{tmp_path / 'x.png'}'")
    assert "rc=3" in got.shown
    assert "kronii: capture get refused: no such screenshot" in got.shown
    assert not (tmp_path / "x.png").exists()


def without_display() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "DISPLAY"}


def on_display(display: str) -> dict[str, str]:
    return {**os.environ, "DISPLAY": display}


async def test_an_out_of_range_request_names_the_field_and_exits_2(capture_service: CaptureProc) -> None:
    # Without a display, a target named in full (pid and window id) goes to the service as it is.
    refused = await kronii(
        capture_service, "request", "--pid", "1", "--window", "1", "--burst-count", "9", env=without_display()
    )
    assert refused.returncode == 2
    assert "burst_count" in refused.stderr


async def test_a_request_without_a_target_says_when_the_sensor_cannot_tell_the_focused_window(
    capture_service: CaptureProc, tmp_path: Path
) -> None:
    from kronii.launcher.infra import free_port

    env = {k: v for k, v in os.environ.items() if not k.startswith("KRONII_")}
    env.update(KRONII_DATA_DIR=str(tmp_path), KRONII_SENSOR_HTTP_PORT=str(free_port()))
    refused = await kronii(capture_service, "request", env=env)
    assert refused.returncode == 5
    assert "the sensor did not answer" in refused.stderr
    assert "--pid and --window" in refused.stderr


async def test_capture_not_running_is_exit_code_5_with_a_sentence(tmp_path: Path) -> None:
    result = await asyncio.to_thread(
        subprocess.run,
        [KRONII, "capture", "--socket", str(tmp_path / "none.sock"), "--timeout", "3", "list"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 5
    assert result.stderr.strip() == (
        f"kronii: capture is not running (no socket at {tmp_path / 'none.sock'}): start it with `kronii up`"
    )
    assert "Traceback" not in result.stderr


async def test_targets_lists_the_windows_a_person_can_name(
    capture_service: CaptureProc, notes: PlantedWindow
) -> None:
    import json

    listed = await asyncio.to_thread(
        subprocess.run, [KRONII, "capture", "targets", "--json"], capture_output=True, text=True,
        timeout=30, env=on_display(notes.display),
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    windows = json.loads(listed.stdout)
    assert {"window": hex(notes.window_id), "pid": notes.pid, "app": notes.wm_class} in [
        {key: w[key] for key in ("window", "pid", "app")} for w in windows
    ]
    table = await asyncio.to_thread(
        subprocess.run, [KRONII, "capture", "targets"], capture_output=True, text=True, timeout=30,
        env=on_display(notes.display),
    )  # fmt: skip
    assert table.stdout.splitlines()[0].split() == ["WINDOW", "PID", "APP", "TITLE"]
    assert any(
        line.startswith(hex(notes.window_id)) and notes.wm_class in line for line in table.stdout.splitlines()
    )


async def test_a_request_names_its_target_by_app_and_the_policy_follows(
    capture_service: CaptureProc, sensor: FakeSensor, notes: PlantedWindow
) -> None:
    await sensor.focus(notes)
    by_app = await kronii(
        capture_service, "request", "--app", notes.wm_class.lower(), "--wait", env=on_display(notes.display)
    )
    assert by_app.returncode == 0, by_app.stderr
    assert f"target: the app {notes.wm_class} (pid {notes.pid}) (app_relaxed)" in by_app.stderr
    assert by_app.stdout.splitlines()[-1].split()[1] == "persisted"
    by_pid = await kronii(capture_service, "request", "--pid", str(notes.pid), env=on_display(notes.display))
    assert by_pid.returncode == 0, by_pid.stderr
    assert f"any window of pid {notes.pid}" in by_pid.stderr and "(window_relaxed)" in by_pid.stderr
    by_id = await kronii(
        capture_service, "request", "--window", str(notes.window_id), env=on_display(notes.display)
    )
    assert by_id.returncode == 0, by_id.stderr
    assert f"target: the window {notes.window_id:#x} {notes.wm_class} pid {notes.pid}" in by_id.stderr
    assert "(strict)" in by_id.stderr


async def test_a_target_that_is_not_on_the_display_is_a_sentence_and_exit_3(
    capture_service: CaptureProc, notes: PlantedWindow
) -> None:
    for named, sentence in (
        (["--window", "zzz-no-such-title"], "no window's title contains 'zzz-no-such-title'"),
        (
            ["--window", "0x7fffffff"],
            "no window 0x7fffffff on this display; `kronii capture targets` lists the windows",
        ),
        (["--app", "NoSuchApp"], "no window of an app named 'NoSuchApp'; the display shows:"),
    ):
        refused = await kronii(capture_service, "request", *named, env=on_display(notes.display))
        assert refused.returncode == 3, refused.stderr
        assert sentence in refused.stderr and "Traceback" not in refused.stderr
