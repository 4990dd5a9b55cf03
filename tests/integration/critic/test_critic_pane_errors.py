"""The opt-in error text from the supervisor's panes, against a real private tmux server: a shell in
an agent session (`agents_...`) runs a failing command and PaneErrors returns what it printed for
that pane's terminal; the same error in a session without the prefix on the same server, and any
pane with the setting off, give nothing. The settings read the supervisor's own variables, the
intake fills a hook event's error text from the pane before redacting it, and a running critic keeps
the error of a hooked bash in an agent pane."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kronii.critic.adapters.pane_errors import PaneErrors
from kronii.critic.core.model import InvocationEvent
from kronii.critic.settings import CriticSettings
from kronii.critic.usecases.record_command import RecordCommand
from kronii.redaction import RedactionContext, RedactionEngine

from tests.agents.harness import private_socket
from tests.desktop import wait_until
from tests.infra import InfraUrls
from tests.integration.critic.shell_pty import shell_setup
from tests.integration.critic.test_critic_service import start_critic
from tests.unit.critic.test_critic_intake import (
    NOW,
    Catalog,
    FakeClock,
    FakeMemory,
    FakeMetrics,
    FixedPolicy,
    Sinks,
)


@pytest.fixture(autouse=True, scope="module")
def _tools_installed() -> None:
    # `make sysdeps` installs them: missing is a failure, not a skip.
    assert shutil.which("tmux") and shutil.which("bash"), "tmux or bash is missing: run `make sysdeps`"


FAILING = "ls /nonexistent-x"
ERROR = "ls: cannot access '/nonexistent-x': No such file or directory"
PROMPT = "pane$"


@dataclass(frozen=True)
class Server:
    socket: str

    def tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-S", self.socket, *args], capture_output=True, text=True, check=True, timeout=10
        ).stdout

    def shell_session(self, name: str) -> str:
        """A session running an interactive bash without the person's rc files, at its first
        prompt (a line typed before it would be echoed by the terminal without one); its pane's tty."""
        shell = f"env PS1='{PROMPT} ' bash --norc --noprofile"
        self.tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "30", shell)
        self.wait_for(name, PROMPT)
        return self.tmux("display-message", "-p", "-t", f"={name}:", "#{pane_tty}").strip()

    def wait_for(self, session: str, shown: str) -> None:
        deadline = time.monotonic() + 10
        while shown not in self.tmux("capture-pane", "-p", "-J", "-t", f"={session}:"):
            if time.monotonic() > deadline:
                raise AssertionError(f"{shown!r} never appeared in {session}")
            time.sleep(0.02)

    def run(self, session: str, command: str, shown: str) -> None:
        self.tmux("send-keys", "-t", f"={session}:", "-l", command)
        self.tmux("send-keys", "-t", f"={session}:", "Enter")
        self.wait_for(session, shown)


@pytest.fixture
def server() -> Iterator[Server]:
    with private_socket() as socket:
        yield Server(socket)


def test_the_error_lines_of_a_failing_command_in_an_agent_pane_are_returned(server: Server) -> None:
    tty = server.shell_session("agents_ws1")
    server.run("agents_ws1", "printf 'earl%s\\n' ier-output", "earlier-output")
    server.run("agents_ws1", FAILING, ERROR)
    panes = PaneErrors(enabled=True, socket=server.socket, prefix="agents_")

    assert panes.error_text(tty, FAILING) == ERROR
    assert panes.error_text(tty, "a command that never ran") == ""


def test_a_pane_outside_the_supervisors_sessions_is_never_read(server: Server) -> None:
    server.shell_session("agents_ws1")
    mine = server.shell_session("mine")
    server.run("mine", FAILING, ERROR)

    assert PaneErrors(enabled=True, socket=server.socket, prefix="agents_").error_text(mine, FAILING) == ""
    # The same pane is readable once its session is the supervisor's: the prefix, not tmux, said no.
    assert PaneErrors(enabled=True, socket=server.socket, prefix="mi").error_text(mine, FAILING) == ERROR


def test_with_the_setting_off_no_pane_is_read(server: Server) -> None:
    tty = server.shell_session("agents_ws1")
    server.run("agents_ws1", FAILING, ERROR)

    assert PaneErrors(enabled=False, socket=server.socket, prefix="agents_").error_text(tty, FAILING) == ""


def test_the_settings_read_the_supervisors_socket_and_prefix_and_default_to_off(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    tty = server.shell_session("team_ws1")
    server.run("team_ws1", FAILING, ERROR)
    monkeypatch.setenv("KRONII_SUPERVISOR_TMUX_SOCKET", server.socket)
    monkeypatch.setenv("KRONII_SUPERVISOR_SESSION_PREFIX", "team_")

    assert PaneErrors.from_settings(CriticSettings()).error_text(tty, FAILING) == ""
    monkeypatch.setenv("KRONII_CRITIC_PANE_ERROR_TEXT", "true")
    assert PaneErrors.from_settings(CriticSettings()).error_text(tty, FAILING) == ERROR


async def test_the_intake_keeps_the_panes_error_as_the_records_error(server: Server) -> None:
    tty = server.shell_session("agents_ws1")
    server.run("agents_ws1", FAILING, ERROR)
    memory, sinks = FakeMemory(), Sinks()
    intake = RecordCommand(
        memory=memory, hints=sinks, notifications=sinks, embeddings=sinks, policy=FixedPolicy(),
        commands=Catalog(), metrics=FakeMetrics(), clock=FakeClock(), engine=RedactionEngine(),
        context=RedactionContext.random(),
        pane_errors=PaneErrors(enabled=True, socket=server.socket, prefix="agents_"),
    )  # fmt: skip

    reported = await intake.report(InvocationEvent("bash", "s1", tty, "/srv/app", FAILING, 2, NOW, 5))

    assert reported.record is not None
    assert "No such file or directory" in memory.records[reported.record.record_id].error_message


def test_a_hooked_shell_in_an_agent_pane_has_its_error_kept_by_the_running_critic(
    server: Server, infra: InfraUrls, migrated_database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KRONII_CRITIC_PANE_ERROR_TEXT", "true")
    monkeypatch.setenv("KRONII_SUPERVISOR_TMUX_SOCKET", server.socket)
    monkeypatch.setenv("KRONII_SUPERVISOR_SESSION_PREFIX", "agents_")
    with start_critic(infra, migrated_database, tmp_path) as critic:
        setup = shell_setup("bash", critic.home, hooked=True)
        shell = shlex.join(["env", *(f"{name}={value}" for name, value in setup.env.items()), *setup.argv])
        server.tmux("new-session", "-d", "-s", "agents_e2e", "-x", "120", "-y", "30", shell)
        server.wait_for("agents_e2e", "@@1@@")
        server.run("agents_e2e", "ls /nonexistent-pane-e2e", "No such file or directory")

        def kept() -> list[Any]:
            hits: list[Any] = critic.get("/v1/critic/search", text="nonexistent-pane-e2e")["hits"]
            return hits

        wait_until(kept, timeout_s=15, what="the failing command kept")
        record = kept()[0]["record"]
    assert record["shell"] == "bash" and record["exit_status"] == 2
    assert "No such file or directory" in record["error_message"], record
