"""The fallback chain's launches (section 9.2): resume the agent's session, or spawn a fresh agent,
in a visible window of the workspace's tmux session; one that proves it started becomes the agent's
runtime and supersedes the old one (deregistered, left on screen, never killed)."""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Callable
from pathlib import Path

from kronii.supervisor.core.agent_kinds import AgentKind, render_argv
from kronii.supervisor.core.job import SESSION_KINDS, Job, session_name
from kronii.supervisor.core.model import RuntimeRecord, RuntimeStatus
from kronii.supervisor.core.pane_reports import StartCheck
from kronii.supervisor.core.params import SupervisorParams
from kronii.supervisor.core.table import Signal
from kronii.supervisor.metrics import SupervisorMetrics
from kronii.supervisor.ports import Clock, Launcher, Runtimes, TriggerLog, TriggerState

__all__ = ["Relauncher", "SessionFinder", "discover_session"]

# (kind, pid, cwd) -> the agent's session id found in its files, or "" (adapters/sessions.py).
SessionFinder = Callable[[str, int, str], str]
RuntimeEnv = Callable[[str, str], dict[str, str]]


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
    ) -> None:
        self._launcher = launcher
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
        """Start a resume or spawn in the workspace's tmux session, in the agent's directory; an
        interactive one that proves it started becomes the agent's runtime."""
        runtime_id = f"rt-{uuid.uuid4().hex[:12]}"
        name = re.sub(r"[^A-Za-z0-9_-]", "_", record.role or record.agent_id)[:24]
        check = await self._launcher.start(
            session=session_name(self._session_prefix, record.workspace_id),
            window=f"{name}-{suffix}" if suffix else name,
            argv=argv,
            env=self._runtime_env(runtime_id, record.workspace_id),
            cwd=record.cwd or None,
            kind=kind,
            exec_style=exec_style,
            status_dir=self._status_dir,
        )
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
                cwd=record.cwd,
                session_id=record.session_id if suffix == "resume" else "",
            )
        )
        if record.status is not RuntimeStatus.OFFLINE:
            # Superseded: deregistered, left on screen, never killed.
            await self._registry.change(
                record.runtime_id,
                status=RuntimeStatus.OFFLINE,
                offline_reason=f"superseded by {new.runtime_id}",
                operator_busy=False,
            )
        return check, new


def _values(job: Job, record: RuntimeRecord) -> dict[str, str]:
    return {
        "session_id": record.session_id,
        "prompt": job.prompt,
        "agent_id": job.agent_id,
        "workspace_id": job.workspace_id,
        "thread_id": job.thread_id,
    }
