"""What `kronii up` leaves when it stops: the agents' tmux sessions keep running unless the user
asked for them to stop (`--stop-agents`), and it says which ones and how; only the agents'
sessions are ever stopped, never the user's own on the same tmux server. Real tmux, private socket."""

from __future__ import annotations

import io
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from kronii.launcher.up import Launcher, LauncherSettings
from kronii.supervisor.adapters.agent_sessions import AgentSessions


def tmux(socket: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["tmux", "-S", str(socket), *args], capture_output=True, text=True, timeout=10, check=False
    )


def sessions(socket: Path) -> list[str]:
    listed = tmux(socket, "list-sessions", "-F", "#{session_name}")
    return listed.stdout.split() if listed.returncode == 0 else []


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Path]:
    socket = tmp_path / "tmux.sock"
    for name in ("agents_web", "agents_api", "mywork"):
        assert tmux(socket, "new-session", "-d", "-s", name, "sleep 600").returncode == 0
    yield socket
    tmux(socket, "kill-server")


def test_only_the_agents_sessions_are_listed_and_stopped(server: Path) -> None:
    agents = AgentSessions(str(server), "agents_", "tmux")
    assert sorted(agents.running()) == ["agents_api", "agents_web"]
    assert sorted(agents.stop()) == ["agents_api", "agents_web"]
    assert sessions(server) == ["mywork"]  # the user's own session, and its server, are untouched


def test_kronii_s_own_server_goes_when_nothing_else_is_on_it(server: Path) -> None:
    tmux(server, "kill-session", "-t", "mywork")
    AgentSessions(str(server), "agents_", "tmux").stop()
    assert tmux(server, "list-sessions").returncode != 0  # no server any more


def launcher(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: Path, *, stop: bool
) -> tuple[Launcher, io.StringIO]:
    monkeypatch.setenv("KRONII_SUPERVISOR_TMUX_SOCKET", str(server))
    out = io.StringIO()
    return Launcher(LauncherSettings(data_dir=tmp_path / "data", stop_agents=stop), out=out), out


def test_without_stop_agents_kronii_says_which_keep_running_and_how_to_stop_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: Path
) -> None:
    up, out = launcher(tmp_path, monkeypatch, server, stop=False)
    up._settle_agents()
    said = out.getvalue()
    assert (
        "2 agent session(s) keep running in tmux (agents_web, agents_api)" in said
        or "(agents_api, agents_web)" in said
    )
    assert f"`tmux -S {server} kill-session -t agents_" in said and "`kronii up --stop-agents`" in said
    assert len(sessions(server)) == 3


def test_with_stop_agents_kronii_stops_them_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: Path
) -> None:
    up, out = launcher(tmp_path, monkeypatch, server, stop=True)
    up._settle_agents()
    assert "kronii: stopped 2 agent session(s)" in out.getvalue()
    assert sessions(server) == ["mywork"]
