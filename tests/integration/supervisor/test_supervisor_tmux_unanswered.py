"""Issue 26 item 13: "tmux could not be asked" is not "the pane is gone". Against a real tmux server
on a private socket: a control connection is only used once tmux attached it (a command that needs
a current client sent earlier failed with "no current client" in about one start in a hundred, and
the look that opened the connection called a live pane gone); a look while the connection is
re-opened, or while tmux does not answer, never calls a live pane gone; only tmux saying there is
no such pane does."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio
from kronii.supervisor.adapters import tmux_connection
from kronii.supervisor.adapters.panes import PaneDriver
from kronii.supervisor.adapters.tmux import TmuxControl
from kronii.supervisor.adapters.tmux_connection import TmuxError, TmuxUnanswered
from kronii.supervisor.core.agent_kinds import DEFAULT_KINDS

from tests.agents.harness import private_socket

PYTHON = DEFAULT_KINDS["python"]


@pytest.fixture
def socket() -> Iterator[str]:
    with private_socket() as path:
        yield path


@pytest_asyncio.fixture
async def live_pane(socket: str) -> AsyncIterator[str]:
    """A pane whose program lives through the whole test, started without the supervisor's client."""
    subprocess.run(["tmux", "-S", socket, "new-session", "-d", "-s", "agents", "sleep 600"], check=True)
    listed = subprocess.run(
        ["tmux", "-S", socket, "list-panes", "-t", "agents", "-F", "#{pane_id}"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    yield listed.stdout.strip()


def _server_pid(socket: str) -> int:
    shown = subprocess.run(
        ["tmux", "-S", socket, "display-message", "-p", "#{pid}"], capture_output=True, text=True, check=True
    )
    return int(shown.stdout.strip())


async def test_a_new_control_connection_takes_commands_only_once_tmux_attached_it(
    socket: str, live_pane: str
) -> None:
    failures: list[str] = []
    for _ in range(150):
        control = TmuxControl(socket)
        try:
            # The first command opens the connection, as the first trigger after a restart does.
            lines = await control.command("display-message", "-p", "-t", live_pane, "#{pane_id}")
            assert lines == [live_pane]
            clients = await control.command("list-clients", "-F", "#{client_pid} #{session_name}")
            assert f"{control.pid} {tmux_connection.CONTROL_SESSION}" in clients
        except TmuxError as error:
            failures.append(str(error))
        finally:
            await control.close()
    assert failures == []


async def test_a_look_while_the_control_client_is_reopened_never_calls_a_live_pane_gone(
    socket: str, live_pane: str
) -> None:
    control = TmuxControl(socket)
    driver = PaneDriver(control)
    seen: list[str] = []
    try:
        for round_ in range(30):
            await control.start()
            assert control.pid is not None
            # The client dies; the supervisor does not know yet. A client that already died (start() kept a
            # connection whose end had not been read yet) is the same case.
            with contextlib.suppress(ProcessLookupError):
                os.kill(control.pid, signal.SIGKILL)
            await asyncio.sleep(0.002 * (round_ % 10))
            looks = await asyncio.gather(*(driver.look(live_pane, 0, PYTHON) for _ in range(3)))
            seen += ["gone" if not look.facts.exists else look.facts.unanswered or "live" for look in looks]
        assert set(seen) == {"live"}, seen
        gone = await driver.look("%999", 0, PYTHON)
        assert not gone.facts.exists and not gone.facts.unanswered, "tmux says there is no such pane"
        assert not await control.pane_exists("%999")
        assert await control.pane_exists(live_pane)
    finally:
        await control.close()


async def test_tmux_not_answering_leaves_the_pane_unknown_not_gone(
    socket: str, live_pane: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tmux_connection, "ANSWER_TIMEOUT_SECS", 0.5)
    control = TmuxControl(socket)
    driver = PaneDriver(control)
    server = _server_pid(socket)
    try:
        await control.start()
        os.kill(server, signal.SIGSTOP)  # a tmux server that does not answer (busy, stopped)
        try:
            look = await driver.look(live_pane, 0, PYTHON)
            with pytest.raises(TmuxUnanswered):
                await control.pane_exists(live_pane)
        finally:
            os.kill(server, signal.SIGCONT)
        assert look.facts.exists, "not taken as gone"
        assert f"tmux did not answer about pane {live_pane}" in look.facts.unanswered
        assert "no answer within 0.5 s" in look.facts.unanswered
        again = await driver.look(live_pane, 0, PYTHON)
        assert again.facts.exists and not again.facts.unanswered, "answered once tmux is back"
        assert await control.pane_exists(live_pane)
        assert not await control.pane_exists("%999")
    finally:
        await control.close()


async def test_a_control_client_tmux_cannot_start_is_unanswered_not_a_gone_pane() -> None:
    control = TmuxControl("/nonexistent-kronii-dir/tmux.sock")
    look = await PaneDriver(control).look("%1", 0, PYTHON)
    assert look.facts.exists and "tmux did not answer about pane %1" in look.facts.unanswered
    await control.close()
