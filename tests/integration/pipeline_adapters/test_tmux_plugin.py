"""The tmux plugin against a real tmux server on a private socket: it reads the active pane of the
most recently active client (or session), summarises and redacts it."""

from __future__ import annotations

import asyncio
import subprocess
import sys

from kronii.pipeline.adapters.tmux_plugin import TmuxPane, TmuxPlugin
from kronii.pipeline.v1 import pipeline_pb2 as pb

from tests.agents.harness import AttachedClient


def tmux(socket: str, *args: str) -> str:
    result = subprocess.run(
        ["tmux", "-S", socket, *args], capture_output=True, text=True, check=True, timeout=10
    )
    return result.stdout.strip()


def start_session(socket: str, name: str, script: str) -> str:
    """A detached session whose pane prints `script`'s output and then waits; returns the pane id."""
    return tmux(
        socket, "new-session", "-d", "-s", name, "-x", "160", "-y", "40", "-P", "-F", "#{pane_id}",
        sys.executable, "-c", f"import sys, time\nsys.stdout.write({script!r})\nsys.stdout.flush()\ntime.sleep(60)",
    )  # fmt: skip


async def wait_for_text(pane: TmuxPane, text: str) -> None:
    for _ in range(100):
        capture = await pane.capture()
        if capture is not None and any(text in line for line in capture.lines):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{text!r} never showed in the focused pane")


TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
FAILING = (
    "dev@box:~/proj$ pytest -q\r\n"
    "F.\r\n"
    "E   AssertionError: assert 1 == 2\r\n"
    f"export GITHUB_TOKEN={TOKEN}\r\n"
    "1 failed, 1 passed in 0.05s\r\n"
)


async def test_the_focused_pane_is_summarised_and_redacted(tmux_socket: str) -> None:
    start_session(tmux_socket, "work", FAILING)
    pane = TmuxPane(tmux_socket)
    await wait_for_text(pane, "1 failed")
    reply = await TmuxPlugin(pane).snapshot(pb.PluginSnapshotRequest(detail=pb.SNAPSHOT_DETAIL_FULL))
    assert reply.error == ""
    assert reply.attributes["last_command"] == "pytest -q"
    assert reply.attributes["tests"] == "1 failed, 1 passed"
    assert "AssertionError: assert 1 == 2" in reply.summary
    assert TOKEN not in reply.full_text and "GITHUB_TOKEN=" in reply.full_text
    assert reply.redaction_level == "amber"


async def test_the_pane_of_the_most_recently_active_client_wins(tmux_socket: str) -> None:
    start_session(tmux_socket, "left", "dev@box:~/a$ make lint\r\n")
    start_session(tmux_socket, "right", "dev@box:~/b$ cargo test\r\ntest result: ok. 3 passed; 0 failed\r\n")
    pane = TmuxPane(tmux_socket)
    # No client attached: the most recently active session ("right", created last).
    await wait_for_text(pane, "cargo test")
    client = AttachedClient(tmux_socket, "left")
    try:
        for _ in range(100):
            capture = await pane.capture()
            if capture is not None and capture.session == tmux(
                tmux_socket, "display", "-p", "-t", "left", "#{session_id}"
            ):
                break
            await asyncio.sleep(0.05)
        reply = await TmuxPlugin(pane).snapshot(pb.PluginSnapshotRequest())
        assert reply.attributes["last_command"] == "make lint"
    finally:
        client.close()


async def test_without_a_tmux_server_the_snapshot_says_why(tmux_socket: str) -> None:
    reply = await TmuxPlugin(TmuxPane(tmux_socket)).snapshot(pb.PluginSnapshotRequest())
    assert reply.error.startswith("no tmux pane")
    assert reply.summary == ""
