"""The fallback chain's launches (section 9.2): resume the agent's session, or spawn a fresh agent,
in a visible window of the workspace's tmux session, in the agent's own world (its environment and
working directory, core/agent_world.py, never the supervisor's HOME); one that proves it started
becomes the agent's runtime and supersedes the old one (`superseded`: left on screen, never killed,
never a trigger's target again)."""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from kronii.supervisor.core.agent_kinds import AgentKind, render_argv
from kronii.supervisor.core.agent_world import AgentWorld, launch_env
from kronii.supervisor.core.job import SESSION_KINDS, Job, session_name
from kronii.supervisor.core.model import RuntimeRecord, RuntimeStatus
from kronii.supervisor.core.pane_reports import StartCheck
from kronii.supervisor.core.params import SupervisorParams
from kronii.supervisor.core.table import Signal
from kronii.supervisor.metrics import SupervisorMetrics
from kronii.supervisor.ports import Clock, Launcher, Runtimes, TriggerLog, TriggerState

__all__ = ["AgentWorlds", "Relauncher", "SessionFinder", "discover_session"]

# (kind, pid, cwd) -> the agent's session id found in its files, or "" (adapters/sessions.py).
SessionFinder = Callable[[str, int, str], str]
# (runtime_id, workspace_id) -> the variables a runtime the supervisor starts gets of it (its id, token).
RuntimeEnv = Callable[[str, str], dict[str, str]]


class AgentWorlds(Protocol):
    """Each runtime's world: read off its agent's process, recorded while it ran (adapters/agent_worlds.py)."""

    async def of(self, record: RuntimeRecord, session: str) -> AgentWorld: ...
    async def note(self, record: RuntimeRecord) -> None: ...
    async def keep(self, runtime_id: str, world: AgentWorld) -> None: ...
    async def forget(self, runtime_id: str) -> None: ...


async def discover_session(registry: Runtimes, find: SessionFinder, record: RuntimeRecord | None) -> str:
    """The agent's logical session, found in the files it writes; kept in the registry."""
    if record is None or record.session_id or record.kind not in SESSION_KINDS:
        return record.session_id if record else ""
    try:
        found = await asyncio.to_thread(find, record.kind, record.pid, record.cwd)
    except OSError:
        return ""
    if found:
        await registry.change(record.runtime_id, session_id=found)
    return found


class Relauncher:
    def __init__(
        self,
        *,
        launcher: Launcher,
        registry: Runtimes,
        state: TriggerState,
        trigger_log: TriggerLog,
        find_session: SessionFinder,
        runtime_env: RuntimeEnv,
        metrics: SupervisorMetrics,
        params: SupervisorParams,
        session_prefix: str,
        status_dir: Path,
        clock: Clock,
        worlds: AgentWorlds | None = None,
    ) -> None:
        self._launcher = launcher
        # None only where no launch is real (unit tests): the runtime's own variables alone.
        self._worlds = worlds
        self._registry = registry
        self._state = state
        self._trigger_log = trigger_log
        self._find_session = find_session
        self._runtime_env = runtime_env
        self._metrics = metrics
        self._params = params
        self._session_prefix = session_prefix
        self._status_dir = status_dir
        self._clock = clock

    async def resume(self, job: Job, record: RuntimeRecord, kind: AgentKind, attempt: int) -> Signal:
        session_id = record.session_id or await discover_session(self._registry, self._find_session, record)
        if not session_id and any("{session_id}" in part for part in kind.resume_argv):
            job.detail = "resume failed: the agent's session id is not known and none was found in its files"
            self._trigger_log.attempt(job.trigger_id, "resume", "failed", attempt=attempt, detail=job.detail)
            return Signal.RESUME_FAILED
        argv = render_argv(kind.resume_argv, {**_values(job, record), "session_id": session_id})
        self._metrics.fallback_resume.inc()
        check, new = await self._start_visible(
            record, kind, argv, exec_style=kind.resume_style == "exec", suffix="resume"
        )
        self._trigger_log.attempt(
            job.trigger_id,
            "resume",
            "started" if check.ok else "failed",
            attempt=attempt,
            program=argv[0],
            pane=check.pane_id,
            seen=check.seen,
            detail=check.detail,
            cwd=record.cwd,
        )
        if new is not None:
            job.runtime_id = new.runtime_id
        if not check.ok:
            job.detail = f"resume failed: {check.detail}"
            await self._state.record_failure(
                job.workspace_id,
                job.agent_id,
                "resume",
                self._clock.monotonic(),
                self._params.crash_loop_window_secs,
            )
            return Signal.RESUME_FAILED
        job.detail = f"resumed in pane {check.pane_id}: {check.detail}"
        return Signal.RESUME_OK

    async def respawn(self, job: Job, record: RuntimeRecord, kind: AgentKind, reason: str) -> Signal:
        self._metrics.fallback_spawn.inc()
        argv = render_argv(kind.spawn_argv, _values(job, record))
        check, new = await self._start_visible(record, kind, argv, exec_style=False, suffix="")
        self._trigger_log.attempt(
            job.trigger_id,
            "spawn",
            "started" if check.ok else "failed",
            reason=reason,
            pane=check.pane_id,
            seen=check.seen,
            detail=check.detail,
            program=argv[0] if argv else "",
            cwd=record.cwd,
        )
        if new is None:
            job.detail = f"spawn failed: {check.detail}"
            return Signal.SPAWN_FAILED
        job.runtime_id = new.runtime_id
        job.detail = f"spawned {new.runtime_id} in pane {new.pty_target}: {check.detail}"
        return Signal.SPAWN_OK

    async def _start_visible(
        self, record: RuntimeRecord, kind: AgentKind, argv: list[str], *, exec_style: bool, suffix: str
    ) -> tuple[StartCheck, RuntimeRecord | None]:
        """Start a resume or spawn in the workspace's tmux session, in the agent's directory and
        environment; an interactive one that proves it started becomes the agent's runtime."""
        runtime_id = f"rt-{uuid.uuid4().hex[:12]}"
        name = re.sub(r"[^A-Za-z0-9_-]", "_", record.role or record.agent_id)[:24]
        session = session_name(self._session_prefix, record.workspace_id)
        world = await self._worlds.of(record, session) if self._worlds is not None else None
        env = launch_env(world, self._runtime_env(runtime_id, record.workspace_id))
        cwd = record.cwd or (world.cwd if world is not None else "")
        check = await self._launcher.start(
            session=session,
            window=f"{name}-{suffix}" if suffix else name,
            argv=argv,
            env=env,
            cwd=cwd or None,
            kind=kind,
            exec_style=exec_style,
            status_dir=self._status_dir,
        )
        if world is not None and world.source:
            check = replace(check, detail=f"{check.detail} (in the agent's environment: {world.source})")
        if not check.ok or exec_style:
            return check, None
        new = await self._registry.add(
            RuntimeRecord(
                runtime_id=runtime_id,
                agent_id=record.agent_id,
                workspace_id=record.workspace_id,
                pty_target=check.pane_id,
                registered_at=self._clock.wall(),
                pid=check.pid,
                kind=record.kind,
                role=record.role,
                managed=True,
                command=tuple(argv),
                cwd=cwd,
                session_id=record.session_id if suffix == "resume" else "",
            )
        )
        await self._supersede(
            record, new, AgentWorld(env, cwd, check.pid, f"given at its start by {suffix or 'spawn'}")
        )
        return check, new

    async def _supersede(self, old: RuntimeRecord, new: RuntimeRecord, world: AgentWorld) -> None:
        """The new runtime is the agent's now, in the world it was started in; the old one, if it
        was still the agent's, is superseded: it runs on, left on screen, and takes no trigger."""
        if self._worlds is not None:
            await self._worlds.keep(new.runtime_id, world)
        if old.status.current:
            await self._registry.change(
                old.runtime_id,
                status=RuntimeStatus.SUPERSEDED,
                offline_reason=f"superseded by {new.runtime_id}",
                operator_busy=False,
            )
        if self._worlds is not None:
            await self._worlds.forget(old.runtime_id)  # never a trigger's target again


def _values(job: Job, record: RuntimeRecord) -> dict[str, str]:
    return {
        "session_id": record.session_id,
        "prompt": job.prompt,
        "agent_id": job.agent_id,
        "workspace_id": job.workspace_id,
        "thread_id": job.thread_id,
    }
