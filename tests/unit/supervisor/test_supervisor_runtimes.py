"""The registry's use cases in process (runtimes.py, reconcile.py, relaunch.py) on fakes of tmux,
the launcher, the registry and the stores, with an injected clock."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from kronii.foundation.errors import InvalidArgument
from kronii.supervisor.core.agent_kinds import DEFAULT_KINDS
from kronii.supervisor.core.job import Job
from kronii.supervisor.core.model import RuntimeStatus
from kronii.supervisor.core.pane_reports import StartCheck
from kronii.supervisor.core.table import Signal
from kronii.supervisor.usecases.access import Access
from kronii.supervisor.v1 import supervisor_pb2 as pb

from tests.unit.supervisor.runtime_fakes import FakeLauncher, relauncher, runtime_world, settings
from tests.unit.supervisor.trigger_fakes import CALLER, FakeClock, FakeRuntimes, runtime


async def test_registering_a_pane_records_the_pane_tmux_reports_and_audits_it(tmp_path: Path) -> None:
    world = runtime_world(tmp_path)

    answer = await world.desk.register(
        pb.RegisterRuntimeRequest(
            agent_id="coder", workspace_id="ws", pty_target="agents:0.0", kind="codex", cwd="/src"
        ),
        CALLER,
    )

    record = world.registry.records[answer.runtime_id]
    assert (record.pty_target, record.pid, record.kind, record.cwd) == ("%7", 4242, "codex", "/src")
    assert record.registered_at == world.clock.now
    assert world.audit.rows == [("coordinator", "supervisor.register", answer.runtime_id, "registered")]


async def test_a_heartbeat_with_an_unknown_status_is_refused_and_a_good_one_is_recorded(
    tmp_path: Path,
) -> None:
    world = runtime_world(tmp_path)
    with pytest.raises(InvalidArgument, match="status must be"):
        await world.desk.heartbeat(pb.HeartbeatRuntimeRequest(runtime_id="rt-1", status="asleep"), CALLER)

    world.clock.advance(5)
    await world.desk.heartbeat(pb.HeartbeatRuntimeRequest(runtime_id="rt-1", status="idle"), CALLER)

    record = world.registry.records["rt-1"]
    assert (record.status, record.last_heartbeat_at) == (RuntimeStatus.IDLE, world.clock.now)


async def test_spawn_starts_the_agent_in_the_workspace_session_with_its_own_runtime_token(
    tmp_path: Path,
) -> None:
    world = runtime_world(tmp_path)

    answer = await world.desk.spawn(
        pb.SpawnRuntimeRequest(
            agent_id="coder", workspace_id="ws", role="review", command=["codex"], kind="codex"
        ),
        CALLER,
    )

    session, window, argv, env = world.terminal.started[0]
    assert (session, window, argv) == ("kronii-ws", "review", ("codex",))
    assert env["KRONII_RUNTIME_ID"] == answer.runtime.runtime_id
    claims = Access(b"s" * 32, settings(tmp_path), world.clock).authenticate(env["KRONII_RUNTIME_TOKEN"])
    assert claims.owns_runtime(answer.runtime.runtime_id)
    assert "kronii-ws" in answer.attach_command


async def test_reconcile_takes_a_runtime_whose_pane_is_gone_offline_and_audits_why(tmp_path: Path) -> None:
    world = runtime_world(tmp_path)
    world.terminal.panes.clear()

    await world.reconciler.reconcile(world.clock.now)

    record = world.registry.records["rt-1"]
    assert (record.status, record.offline_reason) == (RuntimeStatus.OFFLINE, "pane %1 is gone")
    assert world.audit.rows == [("supervisor", "supervisor.offline", "rt-1", "offline")]


async def test_reconcile_never_takes_a_runtime_offline_when_tmux_itself_fails(tmp_path: Path) -> None:
    world = runtime_world(tmp_path)
    world.terminal.broken = True

    await world.reconciler.reconcile(world.clock.now)

    assert world.registry.records["rt-1"].status is RuntimeStatus.ACTIVE
    assert "no server running" in world.reconciler.tmux_problem


async def test_reconcile_turns_a_silent_active_runtime_idle_and_reads_its_state(tmp_path: Path) -> None:
    world = runtime_world(tmp_path)
    world.registry.records["rt-1"] = replace(runtime(), last_heartbeat_at=world.clock.now)
    world.clock.advance(61)

    await world.reconciler.reconcile(world.clock.now)

    assert world.registry.records["rt-1"].status is RuntimeStatus.IDLE
    assert world.agent_states == {"rt-1": "idle"}


def _job() -> Job:
    return Job(
        trigger_id="t-1",
        agent_id="agent",
        workspace_id="ws",
        thread_id="",
        prompt="go",
        literal=True,
        ack_timeout_secs=8.0,
        force=False,
        reason="",
        caller="coordinator",
        request_id="r",
        created_at=0.0,
    )


async def test_a_spawn_that_starts_becomes_the_agents_runtime_and_supersedes_the_old_one() -> None:
    clock, registry = FakeClock(), FakeRuntimes(replace(runtime(), kind="codex"))
    launcher = FakeLauncher(StartCheck(True, pane_id="%5", pid=77, seen="idle"))
    job = _job()

    signal = await relauncher(launcher, registry, clock).respawn(
        job, registry.records["rt-1"], DEFAULT_KINDS["codex"], "ack_timeout"
    )

    assert signal is Signal.SPAWN_OK
    new = registry.records[job.runtime_id]
    assert (new.pty_target, new.pid, new.registered_at) == ("%5", 77, clock.now)
    old = registry.records["rt-1"]
    assert (old.status, old.offline_reason) == (RuntimeStatus.SUPERSEDED, f"superseded by {new.runtime_id}")
    assert launcher.starts[0]["session"] == "kronii-ws"


async def test_a_resume_without_a_known_session_id_fails_without_starting_anything() -> None:
    clock, registry = FakeClock(), FakeRuntimes(replace(runtime(), kind="codex"))
    launcher = FakeLauncher(StartCheck(True, pane_id="%5", pid=77))
    job = _job()

    signal = await relauncher(launcher, registry, clock).resume(
        job, registry.records["rt-1"], DEFAULT_KINDS["codex"], 1
    )

    assert signal is Signal.RESUME_FAILED
    assert "session id is not known" in job.detail
    assert launcher.starts == []
