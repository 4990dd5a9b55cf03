"""The fallback chain in the agent's own world (issue 28): a resume or a fresh session runs with the
environment the agent ran with (HOME, XDG_*, CODEX_HOME, ... read off its process or recorded while
it ran) and in its directory, never the supervisor's; and a runtime the fallback replaced is
`superseded` (still running, never a trigger's target), offline only when its process ends."""

from __future__ import annotations

import stat
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from kronii.supervisor.adapters.agent_worlds import AgentWorlds
from kronii.supervisor.adapters.launcher import start_visible
from kronii.supervisor.adapters.processes import agent_world
from kronii.supervisor.cli.agents import runtime_row
from kronii.supervisor.core.agent_kinds import DEFAULT_KINDS, AgentKind
from kronii.supervisor.core.agent_world import AgentWorld, launch_env, names_to_clear
from kronii.supervisor.core.job import Job
from kronii.supervisor.core.model import RuntimeRecord, RuntimeStatus
from kronii.supervisor.core.pane_reports import StartCheck
from kronii.supervisor.core.params import SupervisorParams
from kronii.supervisor.core.runtime_calls import RuntimeQuery
from kronii.supervisor.core.table import Signal
from kronii.supervisor.metrics import SupervisorMetrics
from kronii.supervisor.usecases.relaunch_agent import Relauncher
from kronii.supervisor.v1 import supervisor_pb2 as pb
from prometheus_client import CollectorRegistry

from tests.unit.supervisor.runtime_fakes import FakeLauncher, FakeTerminal, runtime_world
from tests.unit.supervisor.trigger_fakes import (
    CALLER,
    FakeClock,
    FakeRuntimes,
    FakeState,
    FakeTriggerLog,
    runtime,
)

AGENT_ENV = {
    "HOME": "/home/agent",
    "CODEX_HOME": "/home/agent/codex-private",
    "XDG_CONFIG_HOME": "/home/agent/.config-agent",
    "CLAUDE_CONFIG_DIR": "/home/agent/claude",
    "PATH": "/usr/bin:/bin",
    "TERM": "screen",
    "TMUX": "/tmp/old-server,1,0",
    "TMUX_PANE": "%1",
    "KRONII_RUNTIME_ID": "rt-old",
    "KRONII_RUNTIME_TOKEN": "old-token",
}


# ---- the environment a launch gets ------------------------------------------------------------------


def test_a_launch_gets_the_agents_environment_without_its_old_terminal_and_runtime_variables() -> None:
    world = AgentWorld(env=AGENT_ENV, cwd="/src", pid=9, source="its process 9")

    env = launch_env(world, {"KRONII_RUNTIME_ID": "rt-new", "KRONII_RUNTIME_TOKEN": "new-token"})

    assert env == {
        "HOME": "/home/agent",
        "CODEX_HOME": "/home/agent/codex-private",
        "XDG_CONFIG_HOME": "/home/agent/.config-agent",
        "CLAUDE_CONFIG_DIR": "/home/agent/claude",
        "PATH": "/usr/bin:/bin",
        "KRONII_RUNTIME_ID": "rt-new",
        "KRONII_RUNTIME_TOKEN": "new-token",
    }


def test_what_the_supervisor_or_tmux_would_add_is_cleared_but_the_new_terminals_own_stays() -> None:
    env = {"HOME": "/home/agent", "CODEX_HOME": "/c"}
    present = {"HOME", "XDG_DATA_HOME", "OPENAI_API_KEY", "TERM", "TMUX", "TMUX_PANE", "CODEX_HOME", ""}

    assert names_to_clear(present, env) == ["OPENAI_API_KEY", "XDG_DATA_HOME"]


# ---- reading it off the agent's process ---------------------------------------------------------------


@pytest.fixture
def wrapped_agent(tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A shell (the registered pid, as a pane's shell is) running the agent with an environment of
    its own, in a directory of its own."""
    agent_dir = tmp_path / "agent-cwd"
    agent_dir.mkdir()
    argv = ["env", "-i", "HOME=/home/agent", "CODEX_HOME=/home/agent/codex-private", "PATH=/usr/bin:/bin",
            "sh", "-c", f"cd {agent_dir} && sleep 30; :"]  # fmt: skip
    process = subprocess.Popen(argv)
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def _until_child(pid: int) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        found = agent_world(pid, "generic")
        if found is not None and found[1] and found[0].pid != pid and "CODEX_HOME" in found[0].env:
            return
        time.sleep(0.02)
    raise AssertionError(f"process {pid} never ran its agent")


def test_the_agents_world_is_read_from_the_process_under_the_registered_shell(
    wrapped_agent: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    _until_child(wrapped_agent.pid)

    found = agent_world(wrapped_agent.pid, "generic")

    assert found is not None
    world, is_agent = found
    assert is_agent and world.pid != wrapped_agent.pid, "the agent under the shell, not the shell"
    assert world.env["HOME"] == "/home/agent" and world.env["CODEX_HOME"] == "/home/agent/codex-private"
    assert world.cwd == str(tmp_path / "agent-cwd")
    assert agent_world(0, "generic") is None


async def test_a_world_read_while_the_agent_ran_is_recorded_privately_and_outlives_it(
    wrapped_agent: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    _until_child(wrapped_agent.pid)
    folder = tmp_path / "worlds"
    record = replace(runtime(), pid=wrapped_agent.pid)
    worlds = AgentWorlds(folder, FakeTerminal())

    await worlds.note(record)
    wrapped_agent.kill()
    wrapped_agent.wait()

    path = folder / "rt-1.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(folder.stat().st_mode) == 0o700
    again = await AgentWorlds(folder, FakeTerminal()).of(record, "kronii-ws")  # a supervisor restarted
    assert again.env["CODEX_HOME"] == "/home/agent/codex-private"
    assert again.source.startswith("recorded from its process")
    await worlds.forget("rt-1")
    assert not path.exists()


async def test_an_agent_never_readable_gets_what_the_tmux_session_gives_and_says_so(tmp_path: Path) -> None:
    class Tmux(FakeTerminal):
        async def command(self, *args: str) -> list[str]:
            if args[:2] == ("show-environment", "-g"):
                return ["HOME=/home/person", "DISPLAY=:0", "SSH_AUTH_SOCK=/a"]
            return ["-SSH_AUTH_SOCK", "EDITOR=vi"]

    record = replace(runtime(), pid=0)

    world = await AgentWorlds(tmp_path, Tmux()).of(record, "kronii-ws")

    assert world.env == {"HOME": "/home/person", "DISPLAY": ":0", "EDITOR": "vi"}
    assert "tmux session" in world.source


async def test_a_runtime_id_is_never_a_path(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a runtime id"):
        await AgentWorlds(tmp_path, FakeTerminal()).keep("../../etc/passwd", AgentWorld())


# ---- the fallback chain runs in it --------------------------------------------------------------------


class Worlds:
    """The agent's world as the adapter would give it, and what the fallback records and forgets."""

    def __init__(self, world: AgentWorld) -> None:
        self.world = world
        self.kept: dict[str, AgentWorld] = {}
        self.forgotten: list[str] = []

    async def of(self, record: RuntimeRecord, session: str) -> AgentWorld:
        return self.world

    async def note(self, record: RuntimeRecord) -> None:
        return None

    async def keep(self, runtime_id: str, world: AgentWorld) -> None:
        self.kept[runtime_id] = world

    async def forget(self, runtime_id: str) -> None:
        self.forgotten.append(runtime_id)


class EnvLauncher(FakeLauncher):
    """The fake launcher that also notes the environment and directory it was given."""

    async def start(
        self, *, session: str, window: str, argv: Sequence[str], env: Mapping[str, str], cwd: str | None,
        kind: AgentKind, exec_style: bool, status_dir: Path,
    ) -> StartCheck:  # fmt: skip
        check = await super().start(
            session=session, window=window, argv=argv, env=env, cwd=cwd, kind=kind, exec_style=exec_style,
            status_dir=status_dir,
        )  # fmt: skip
        self.starts[-1].update(env=dict(env), cwd=cwd)
        return check


def _relauncher(launcher: FakeLauncher, registry: FakeRuntimes, worlds: Worlds) -> Relauncher:
    return Relauncher(
        launcher=launcher, registry=registry, state=FakeState(), trigger_log=FakeTriggerLog(),
        find_session=lambda kind, pid, cwd: "", metrics=SupervisorMetrics(CollectorRegistry()),
        runtime_env=lambda runtime_id, workspace_id: {"KRONII_RUNTIME_ID": runtime_id},
        params=SupervisorParams(), session_prefix="kronii-", status_dir=Path("exits"), clock=FakeClock(),
        worlds=worlds,
    )  # fmt: skip


def _job() -> Job:
    return Job(trigger_id="t1", agent_id="agent", workspace_id="ws", thread_id="", prompt="go", literal=True,
               ack_timeout_secs=8.0, force=False, reason="", caller="c", request_id="r", created_at=0.0)  # fmt: skip


async def test_a_fresh_session_runs_in_the_agents_environment_and_directory_and_supersedes_it() -> None:
    registry = FakeRuntimes(replace(runtime(), kind="codex", cwd="/src/project", pid=4242))
    launcher = EnvLauncher(StartCheck(True, pane_id="%5", pid=77, seen="idle", detail="idle after 1.0 s"))
    worlds = Worlds(AgentWorld(env=AGENT_ENV, cwd="/elsewhere", pid=4243, source="its process 4243"))
    job = _job()

    signal = await _relauncher(launcher, registry, worlds).respawn(
        job, registry.records["rt-1"], DEFAULT_KINDS["codex"], "collision_past_max_defer"
    )

    assert signal is Signal.SPAWN_OK
    start = launcher.starts[0]
    assert start["env"]["HOME"] == "/home/agent" and start["env"]["CODEX_HOME"] == "/home/agent/codex-private"
    assert start["env"]["KRONII_RUNTIME_ID"] == job.runtime_id != "rt-old"
    assert not {"TERM", "TMUX", "TMUX_PANE", "KRONII_RUNTIME_TOKEN"} & set(start["env"])
    assert start["cwd"] == "/src/project", "the registered directory first"
    assert "in the agent's environment: its process 4243" in job.detail
    old, new = registry.records["rt-1"], registry.records[job.runtime_id]
    assert (old.status, old.offline_reason) == (RuntimeStatus.SUPERSEDED, f"superseded by {new.runtime_id}")
    assert new.status is RuntimeStatus.IDLE and new.cwd == "/src/project"
    assert worlds.kept[new.runtime_id].env == start["env"] and worlds.forgotten == ["rt-1"]


async def test_a_fresh_session_stuck_at_a_dialog_supersedes_nothing() -> None:
    registry = FakeRuntimes(replace(runtime(), kind="codex"))
    failed = StartCheck(False, pane_id="%5", pid=77, seen="blocked",
                        detail="codex stopped at a dialog, not its input screen: 'Welcome to Codex'")  # fmt: skip
    worlds = Worlds(AgentWorld(env=AGENT_ENV, source="its process 9"))
    job = _job()

    signal = await _relauncher(EnvLauncher(failed), registry, worlds).respawn(
        job, registry.records["rt-1"], DEFAULT_KINDS["codex"], "runtime_unavailable"
    )

    assert signal is Signal.SPAWN_FAILED
    assert (
        job.detail.startswith("spawn failed: codex stopped at a dialog") and "Welcome to Codex" in job.detail
    )
    assert registry.records["rt-1"].status is RuntimeStatus.ACTIVE and len(registry.records) == 1
    assert worlds.kept == {} and worlds.forgotten == []


# ---- superseded in the registry -----------------------------------------------------------------------


def test_a_trigger_goes_to_the_agents_current_runtime_never_a_superseded_one() -> None:
    old = replace(runtime("rt-old"), status=RuntimeStatus.SUPERSEDED, registered_at=1.0)
    new = replace(runtime("rt-new"), status=RuntimeStatus.IDLE, registered_at=2.0)
    later = replace(runtime("rt-later"), status=RuntimeStatus.SUPERSEDED, registered_at=3.0)

    assert FakeRuntimes(old, new).for_agent("ws", "agent") == new
    assert FakeRuntimes(later, new).for_agent("ws", "agent") == new
    gone = replace(new, status=RuntimeStatus.OFFLINE)
    assert FakeRuntimes(old, gone).for_agent("ws", "agent") == gone, "the fallback chain starts from it"
    assert not RuntimeStatus.SUPERSEDED.current and RuntimeStatus.IDLE.current


async def test_reconcile_keeps_a_superseded_runtime_superseded_while_it_runs_then_offline(
    tmp_path: Path,
) -> None:
    world = runtime_world(tmp_path)
    world.registry.records["rt-1"] = replace(
        runtime(), status=RuntimeStatus.SUPERSEDED, offline_reason="superseded by rt-new"
    )
    world.state.counts_failures = True

    await world.reconciler.reconcile(world.clock.now)
    assert world.registry.records["rt-1"].status is RuntimeStatus.SUPERSEDED

    world.terminal.panes.clear()  # its process and pane end
    await world.reconciler.reconcile(world.clock.now)

    record = world.registry.records["rt-1"]
    assert record.status is RuntimeStatus.OFFLINE
    assert record.offline_reason == "pane %1 is gone (superseded by rt-new)"
    assert world.state.failure_times == [], "a replaced runtime ending is not a crash of the agent"


async def test_a_superseded_runtimes_heartbeat_leaves_it_superseded(tmp_path: Path) -> None:
    world = runtime_world(tmp_path)
    world.registry.records["rt-1"] = replace(runtime(), status=RuntimeStatus.SUPERSEDED)

    answer = await world.desk.heartbeat(
        pb.HeartbeatRuntimeRequest(runtime_id="rt-1", status="active"), CALLER
    )

    assert answer.status == "superseded"
    assert world.registry.records["rt-1"].last_heartbeat_at == world.clock.now


async def test_the_agents_list_shows_a_superseded_runtime_as_such_and_hides_it_only_once_offline(
    tmp_path: Path,
) -> None:
    world = runtime_world(tmp_path)
    world.registry.records["rt-1"] = replace(runtime(), status=RuntimeStatus.SUPERSEDED)
    world.registry.records["rt-2"] = replace(runtime("rt-2"), status=RuntimeStatus.OFFLINE)

    listed = await world.desk.runtimes.list_runtimes(RuntimeQuery(), CALLER)

    assert [view.record.runtime_id for view in listed] == ["rt-1"]
    row = runtime_row({"runtime_id": "rt-1", "workspace_id": "ws", "agent_id": "a", "kind": "codex",
                       "status": listed[0].record.status.value, "pty_target": "%1", "pid": 7})  # fmt: skip
    assert row[5] == "superseded"


# ---- a fresh session counts only at its input screen ---------------------------------------------------

SCREENS = Path(__file__).resolve().parents[2] / "data" / "agents" / "codex"
SIGN_IN = (
    "\x1b[2m⢀⣀⣠⣤⣤⣤⣤⣤⣤⣀⣀\x1b[0m",
    "  Welcome to Codex, OpenAI's command-line coding agent",
    "  Choose how you want to use Codex.",
    "> 1. Sign in with ChatGPT",
    "  Press enter to continue",
)


class ScreenTmux:
    """A tmux whose new pane shows `screens` one look after another (the last one stays)."""

    def __init__(self, *screens: tuple[int, int, tuple[str, ...]]) -> None:
        self.screens = list(screens)
        self.started: list[tuple[list[str], dict[str, str]]] = []

    async def command(self, *args: str) -> list[str]:
        return ["HOME=/home/supervisor", "XDG_CONFIG_HOME=/home/supervisor/.config"] if "-g" in args else []

    async def start_agent(
        self, session: str, window: str, argv: Sequence[str], **options: Any
    ) -> tuple[str, int]:
        self.started.append((list(argv), dict(options["env"])))
        return "%5", 55

    async def pane_exit(self, target: str) -> tuple[bool, int | None]:
        return False, None

    async def screen_at(self, target: str) -> tuple[int, int, tuple[str, ...]]:
        return self.screens.pop(0) if len(self.screens) > 1 else self.screens[0]


def _recorded(name: str) -> tuple[int, int, tuple[str, ...]]:
    """A screen recorded off the real Codex, with its cursor (tests/data/agents/record.py)."""
    header, *raw = (SCREENS / f"{name}.ansi").read_text(encoding="utf-8").split("\n")
    _, x, y = header.split()
    return int(x), int(y), tuple(raw)


async def _start(tmux: ScreenTmux, tmp_path: Path) -> StartCheck:
    return await start_visible(
        tmux, session="kronii-ws", window="coder", argv=["codex", "go"],  # type: ignore[arg-type]
        env={"HOME": "/home/agent", "CODEX_HOME": "/c"}, cwd="/src", kind=DEFAULT_KINDS["codex"],
        exec_style=False, status_dir=tmp_path,
    )  # fmt: skip


async def test_a_fresh_session_whose_main_screen_turns_into_its_sign_in_is_a_failed_start(
    tmp_path: Path,
) -> None:
    tmux = ScreenTmux(_recorded("idle"), (0, 4, SIGN_IN))

    check = await _start(tmux, tmp_path)

    assert not check.ok and check.seen == "blocked"
    assert check.detail == (
        'codex stopped at a dialog, not its input screen: "Welcome to Codex, OpenAI\'s command-line coding agent"'
    )


async def test_a_fresh_session_at_its_input_screen_with_no_dialog_after_is_started_in_exactly_its_env(
    tmp_path: Path,
) -> None:
    tmux = ScreenTmux(_recorded("idle"))

    check = await _start(tmux, tmp_path)

    assert check.ok and check.seen == "idle" and check.detail.startswith("idle after ")
    argv, env = tmux.started[0]
    assert argv[0] == "env" and argv[-3:] == ["--", "codex", "go"]
    cleared = argv[1 : argv.index("--")]
    assert "XDG_CONFIG_HOME" in cleared, "what the tmux server has and the agent has not is removed"
    assert "HOME" not in cleared and "CODEX_HOME" not in cleared, "the agent's own are set, not cleared"
    assert env == {"HOME": "/home/agent", "CODEX_HOME": "/c"}
