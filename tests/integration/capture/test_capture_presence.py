"""A person's proof of presence before reading screenshots (seed 000, "Human-in-the-loop for
kronictl"), without polkit on the system bus: the TTY binding. The capture CLI runs on a real
pseudo-terminal against the capture service as a process (real Redis, PostgreSQL, Xvfb); the
service cross-checks the terminal and session the client names with /proc, opens a read-only
window (6 s here, 2 minutes by default) that never carries REQUEST_CAPTURE, and audits every proof.
"""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import psycopg
import pytest
import pytest_asyncio
from kronii.capture.core.capabilities import Capability
from kronii.capture.v1 import capture_pb2 as pb
from kronii.capture.v1 import capture_pb2_grpc as pb_grpc
from kronii.foundation.urls import libpq_url
from PIL import Image

from tests.infra import InfraUrls
from tests.integration.capture.capture_support import (
    CaptureProc,
    FakeSensor,
    PlantedWindow,
    TerminalRun,
    agent_bearer,
    capture_env,
    planted_window,
    run_on_terminal,
    start_capture,
)

# Long enough for a second CLI run to start inside it on a busy machine.
WINDOW_SECS = 6
# The capture CLI as `kronii capture` runs it, without loading every other service's commands.
CLI = f"'{sys.executable}' -m kronii.capture.cli capture"
NEEDS_A_PERSON = "reading screenshots needs a person at a terminal"

# Names a terminal or a session that is not its own; prints one RESULT line per claim.
_CLAIMS = """
import os, sys, grpc
from kronii.capture.v1 import capture_pb2 as pb, capture_pb2_grpc as pb_grpc
_, other = os.openpty()
own_tty = os.ttyname(0) if os.isatty(0) else os.ttyname(1)
claims = {
    "other-terminal": (os.ttyname(other), os.getsid(0)),
    "other-session": (own_tty, os.getsid(0) + 100000),
    "own-terminal": (own_tty, os.getsid(0)),
}
with grpc.insecure_channel("unix:" + sys.argv[1]) as channel:
    stub = pb_grpc.ScreenCaptureStub(channel)
    for name in sys.argv[2:]:
        tty, session = claims[name]
        metadata = (("kronii-tty", tty), ("kronii-session", str(session)))
        try:
            stub.ListScreenshots(pb.ListScreenshotsRequest(), metadata=metadata, timeout=10)
            print("RESULT", name, "OK", flush=True)
        except grpc.RpcError as error:
            print("RESULT", name, error.code().name, error.details(), flush=True)
"""


@pytest.fixture(scope="module")
def presence_service(
    infra: InfraUrls, capture_database: str, x_display: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[CaptureProc]:
    env = capture_env(infra, capture_database, tmp_path_factory.mktemp("capture-presence"), x_display)
    env.update(
        KRONII_CAPTURE_HUMAN_WINDOW_SECS=str(WINDOW_SECS),
        KRONII_CAPTURE_LOCAL_REQUEST_CAPTURE="false",
        # Refusals are what these tests provoke; the breaker is tested elsewhere.
        KRONII_CAPTURE_BREAKER_FAILURES="1000",
    )
    with start_capture(env) as service:
        yield service


@pytest.fixture(scope="module")
def window(x_display: str) -> Iterator[PlantedWindow]:
    with planted_window(x_display) as planted:
        yield planted


@pytest_asyncio.fixture(scope="module")
async def screenshot_id(
    presence_service: CaptureProc,
    sensor: FakeSensor,
    window: PlantedWindow,
    infra: InfraUrls,
    capture_database: str,
) -> str:
    """One persisted screenshot, requested by an agent (local processes may not request here)."""
    bearer = await agent_bearer(
        presence_service.unix_target, infra.redis, capture_database, Capability.REQUEST_CAPTURE
    )
    await sensor.focus(window)
    async with grpc.aio.insecure_channel(presence_service.unix_target) as channel:
        stub = pb_grpc.ScreenCaptureStub(channel)
        job = await stub.RequestScreenCapture(
            pb.CaptureRequest(
                process_id=window.pid, window_id=window.window_id, bypass=pb.STRICT, requester="it.presence"
            ),
            metadata=bearer,
            timeout=10,
        )
        seen = [s async for s in stub.WatchCapture(job, metadata=bearer, timeout=60)]
    assert seen[-1].status == pb.PERSISTED, seen
    return str(seen[-1].primary_screenshot_id)


def cli_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("KRONII_")}


def cli(service: CaptureProc, args: str) -> str:
    """A command line for the terminal (`--` before a screenshot id: an id may begin with "-")."""
    return f"{CLI} --socket '{service.socket}' --timeout 30 {args}"


async def on_terminal(script: str) -> TerminalRun:
    return await asyncio.to_thread(run_on_terminal, script, cli_env())


def presence_rows(database: str, session: int) -> list[tuple[str, str, dict[str, Any]]]:
    """The capture.presence audit rows of one terminal session, oldest first."""
    with psycopg.connect(libpq_url(database)) as conn:
        rows = conn.execute(
            "SELECT outcome, actor, detail FROM audit_log WHERE action = 'capture.presence' "
            "AND (detail->>'session')::bigint = %s ORDER BY id",
            (session,),
        ).fetchall()
    return [(row[0], row[1], row[2]) for row in rows]


def reads_of(database: str, screenshot: str) -> list[tuple[str, str, dict[str, Any]]]:
    with psycopg.connect(libpq_url(database)) as conn:
        rows = conn.execute(
            "SELECT action, outcome, detail FROM audit_log WHERE subject = %s ORDER BY id", (screenshot,)
        ).fetchall()
    return [(row[0], row[1], row[2]) for row in rows]


def results(shown: str) -> dict[str, str]:
    return {
        line.split()[1]: line.split(" ", 2)[2] for line in shown.splitlines() if line.startswith("RESULT ")
    }


async def test_a_person_on_a_terminal_reads_a_screenshot_and_the_proof_is_audited(
    presence_service: CaptureProc, screenshot_id: str, capture_database: str, tmp_path: Path
) -> None:
    out = tmp_path / "shot.png"

    run = await on_terminal(cli(presence_service, f"get -o '{out}' -- {screenshot_id}"))

    assert run.code == 0, run.shown
    assert "wrote" in run.shown and "redacted PNG" in run.shown
    assert Image.open(io.BytesIO(out.read_bytes())).format == "PNG"
    proofs = presence_rows(capture_database, run.session)
    assert len(proofs) == 1
    outcome, actor, detail = proofs[0]
    assert (outcome, actor) == ("ok", f"local:uid:{os.getuid()}")
    assert detail["method"] == "tty" and detail["tty"].startswith("pts/")
    assert detail["pid"] > 0 and Path(detail["exe"]).name.startswith("python")
    assert detail["capabilities"] == ["READ_REDACTED", "LIST_META"]
    assert detail["window_ms"] == WINDOW_SECS * 1000
    reads = {
        action: (result, found)
        for action, result, found in reads_of(capture_database, screenshot_id)
        if found.get("pid") == detail["pid"]
    }
    assert reads["capture.issue_token"][0] == "ok" and reads["capture.issue_token"][1]["proof"] == "tty"
    assert reads["capture.get_screenshot"][0] == "ok"
    assert reads["capture.get_screenshot"][1]["proof"] == "window"  # the same run's open window


async def test_the_cli_without_a_terminal_on_standard_input_is_refused_with_a_sentence(
    presence_service: CaptureProc, screenshot_id: str, capture_database: str, tmp_path: Path
) -> None:
    out = tmp_path / "never.png"

    run = await on_terminal(cli(presence_service, f"get -o '{out}' -- {screenshot_id} < /dev/null"))

    assert run.code == 4  # refused
    assert f"kronii: capture get refused: {NEEDS_A_PERSON}" in run.shown
    assert "Traceback" not in run.shown and not out.exists()
    proofs = presence_rows(capture_database, run.session)
    assert [(outcome, detail["method"]) for outcome, _, detail in proofs] == [("refused", "tty")]
    assert proofs[0][2]["reason"].startswith(NEEDS_A_PERSON) and proofs[0][2]["pid"] > 0


async def test_a_process_that_names_a_terminal_or_session_not_its_own_is_refused(
    presence_service: CaptureProc, capture_database: str, tmp_path: Path
) -> None:
    script = tmp_path / "claims.py"
    script.write_text(_CLAIMS)
    python = f"'{sys.executable}' '{script}' '{presence_service.socket}'"

    on_pty = await on_terminal(
        f"{python} other-terminal other-session; {python} own-terminal < /dev/null; "
        f"{cli(presence_service, 'list < /dev/null')}; echo after=$?"
    )
    # A process with no controlling terminal at all that names the pseudo-terminal it was given.
    master, slave = os.openpty()
    try:
        headless = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, str(script), str(presence_service.socket), "own-terminal"],
            stdin=slave,
            capture_output=True,
            text=True,
            timeout=60,
            env=cli_env(),
            start_new_session=True,
        )
    finally:
        os.close(master)
        os.close(slave)

    found = results(on_pty.shown)
    assert found["other-terminal"].startswith("PERMISSION_DENIED"), on_pty.shown
    assert "not the calling process's own terminal" in found["other-terminal"]
    assert "not the calling process's own session" in found["other-session"]
    assert "standard input is not its terminal" in found["own-terminal"]
    assert "no controlling terminal" in results(headless.stdout)["own-terminal"], headless.stdout
    # None of them opened a window: the next read from that terminal session still needs a proof.
    assert "after=4" in on_pty.shown and NEEDS_A_PERSON in on_pty.shown
    refused = [detail for outcome, _, detail in presence_rows(capture_database, on_pty.session)]
    assert len(refused) == 4 and all(detail["reason"] for detail in refused)
    assert all(outcome == "refused" for outcome, _, _ in presence_rows(capture_database, on_pty.session))


async def test_after_the_window_expires_a_read_asks_again(
    presence_service: CaptureProc, screenshot_id: str, capture_database: str
) -> None:
    listing = cli(presence_service, "list -n 5")
    run = await on_terminal(
        f"{listing}; echo first=$?; {listing} < /dev/null; echo within=$?; "
        f"sleep {WINDOW_SECS + 1}; {listing} < /dev/null; echo expired=$?; {listing}; echo again=$?"
    )

    assert "first=0" in run.shown and "within=0" in run.shown, run.shown
    assert "expired=4" in run.shown and NEEDS_A_PERSON in run.shown
    assert "again=0" in run.shown
    assert run.shown.count(screenshot_id) == 3  # the three reads that were allowed listed it
    proofs = [
        (outcome, detail["method"]) for outcome, _, detail in presence_rows(capture_database, run.session)
    ]
    assert proofs == [("ok", "tty"), ("refused", "tty"), ("ok", "tty")]


async def test_the_read_only_window_never_allows_request_capture(
    presence_service: CaptureProc, window: PlantedWindow, screenshot_id: str
) -> None:
    request = cli(presence_service, f"request --pid {window.pid} --window {window.window_id}")

    run = await on_terminal(
        f"{cli(presence_service, 'list -n 1')}; echo listed=$?; {request}; echo requested=$?"
    )

    assert "listed=0" in run.shown and screenshot_id in run.shown, run.shown
    assert "requested=4" in run.shown
    assert "capture request refused: this client lacks the REQUEST_CAPTURE capability" in run.shown
