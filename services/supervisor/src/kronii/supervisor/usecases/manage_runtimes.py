"""The runtime registry's calls (sections 10.1, 10.3, 10.4, 13): register a pane an agent runs in,
heartbeat, deregister, list, pause, read its (redacted) screen, and spawn a managed agent in the
workspace's tmux session."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import uuid
from collections.abc import Callable

from kronii.foundation.errors import Conflict, InvalidArgument, NotFound, PermissionDenied, Unavailable
from kronii.supervisor.core.agent_kinds import KindBook
from kronii.supervisor.core.agent_states import AgentStates
from kronii.supervisor.core.job import attach_command, require_id, session_name
from kronii.supervisor.core.model import RuntimeRecord, RuntimeStatus
from kronii.supervisor.core.runtime_calls import (
    Heartbeat,
    PaneLines,
    RegisterRuntime,
    RuntimeQuery,
    RuntimeView,
    Spawned,
    SpawnRuntime,
)
from kronii.supervisor.core.tokens import Claims
from kronii.supervisor.ports import AuditTrail, Clock, Runtimes, Terminal, TerminalError, TriggerState
from kronii.supervisor.settings import SupervisorSettings
from kronii.supervisor.usecases.access import Access, need
from kronii.supervisor.usecases.acknowledge import AckBoard
from kronii.supervisor.usecases.redact_text import redact_text
from kronii.supervisor.usecases.relaunch_agent import AgentWorlds

__all__ = ["ManageRuntimes"]

log = logging.getLogger(__name__)


class ManageRuntimes:
    def __init__(
        self,
        *,
        registry: Runtimes,
        terminal: Terminal,
        state: TriggerState,
        acks: AckBoard,
        access: Access,
        audit: AuditTrail,
        settings: SupervisorSettings,
        kinds: KindBook,
        agent_states: AgentStates,
        clock: Clock,
        worlds: AgentWorlds | None = None,
    ) -> None:
        self._registry = registry
        # Where each agent's environment is recorded (registration; the reconcile loop refreshes it).
        self._worlds = worlds
        # Told of each runtime registered or started (app.py: the reconciler learns its screen).
        self.on_started: Callable[[RuntimeRecord], None] = lambda _record: None
        self._terminal = terminal
        self._state = state
        self._acks = acks
        self._access = access
        self._audit = audit
        self._settings = settings
        self._kinds = kinds
        self._agent_states = agent_states
        self._clock = clock

    def _runtime(self, runtime_id: str, claims: Claims, scope: str) -> RuntimeRecord:
        record = self._registry.get(runtime_id)
        if record is None:
            raise NotFound(f"no runtime {runtime_id!r} is registered")
        need(claims, scope, record.workspace_id, runtime_id=runtime_id if scope == "operate" else "")
        return record

    def _view(self, record: RuntimeRecord) -> RuntimeView:
        return RuntimeView(record, self._agent_states.shown(record))

    async def register(self, req: RegisterRuntime, claims: Claims) -> RuntimeView:
        require_id("agent_id", req.agent_id)
        require_id("workspace_id", req.workspace_id)
        need(claims, "operate", req.workspace_id)
        backend = req.pty_backend or "tmux"
        if backend != "tmux":
            raise InvalidArgument(f"pty_backend {backend!r} is not supported here; use 'tmux'")
        if not req.pty_target:
            raise InvalidArgument("pty_target is required (a tmux pane such as %3 or session:window.pane)")
        pane_id = req.pty_target
        pid = req.pid
        with contextlib.suppress(TerminalError, TimeoutError, ValueError):
            probe = await self._terminal.probe(req.pty_target)
            pane_id, pid = probe.pane_id, pid or probe.pane_pid
        record = RuntimeRecord(
            runtime_id=f"rt-{uuid.uuid4().hex[:12]}",
            agent_id=req.agent_id,
            workspace_id=req.workspace_id,
            pty_target=pane_id,
            registered_at=self._clock.wall(),
            session_id=req.session_id,
            pty_backend=backend,
            pid=pid,
            kind=req.kind or "generic",
            role=req.role,
            managed=True,
            cwd=req.cwd or _process_cwd(pid),
        )
        await self._registry.add(record)
        self.on_started(record)
        if self._worlds is not None:
            await self._worlds.note(record)
        await self._audit(
            actor=claims.subject,
            action="supervisor.register",
            subject=record.runtime_id,
            outcome="registered",
            agent_id=req.agent_id,
            workspace_id=req.workspace_id,
            pty_target=pane_id,
            pid=pid,
        )
        return self._view(record)

    async def heartbeat(self, req: Heartbeat, claims: Claims) -> RuntimeView:
        record = self._runtime(req.runtime_id, claims, "operate")
        status = req.status or "active"
        if status not in ("active", "idle"):
            raise InvalidArgument(f"status must be 'active' or 'idle', not {status!r}")
        now = self._clock.wall()
        activity = req.last_activity_at if req.last_activity_at is not None else now
        # A superseded runtime's agent may still beat: it stays superseded (a fresh session took its place).
        shown = record.status if record.status is RuntimeStatus.SUPERSEDED else RuntimeStatus(status)
        record = await self._registry.change(
            record.runtime_id, status=shown, last_heartbeat_at=now, last_activity_at=activity
        )
        await self._state.bump_progress(record.runtime_id)
        self._acks.acknowledge_runtime(record.runtime_id, "heartbeat")
        return self._view(record)

    async def deregister(self, runtime_id: str, reason: str, claims: Claims) -> RuntimeView:
        record = self._runtime(runtime_id, claims, "operate")
        reason = reason or "deregistered"
        record = await self._registry.change(
            record.runtime_id, status=RuntimeStatus.OFFLINE, offline_reason=reason, operator_busy=False
        )
        await self._audit(
            actor=claims.subject,
            action="supervisor.deregister",
            subject=record.runtime_id,
            outcome="offline",
            reason=reason,
        )
        return self._view(record)

    async def list_runtimes(self, req: RuntimeQuery, claims: Claims) -> list[RuntimeView]:
        need(claims, "read", req.workspace_id or None)
        found = self._registry.query(
            workspace_id=req.workspace_id, agent_id=req.agent_id, include_offline=req.include_offline
        )
        return [self._view(r) for r in found if claims.allows_workspace(r.workspace_id)]

    async def get_runtime(self, runtime_id: str, claims: Claims) -> RuntimeView:
        return self._view(self._runtime(runtime_id, claims, "read"))

    async def set_paused(self, runtime_id: str, paused: bool, reason: str, claims: Claims) -> RuntimeView:
        record = self._runtime(runtime_id, claims, "operate")
        if not claims.has("operate"):
            raise PermissionDenied("pausing a runtime needs the 'operate' scope")
        record = await self._registry.change(record.runtime_id, paused=paused)
        await self._audit(
            actor=claims.subject,
            action="supervisor.pause" if paused else "supervisor.unpause",
            subject=record.runtime_id,
            outcome="paused" if paused else "running",
            reason=reason,
        )
        return self._view(record)

    async def logs(self, runtime_id: str, lines: int, claims: Claims) -> PaneLines:
        record = self._runtime(runtime_id, claims, "read")
        count = min(lines or 50, 2000)
        try:
            shown = await self._terminal.command(
                "capture-pane", "-p", "-J", "-S", f"-{count}", "-t", record.pty_target
            )
        except (TerminalError, TimeoutError) as error:
            raise Conflict(f"the runtime's pane cannot be read: {error}") from None
        while shown and not shown[-1].strip():
            shown.pop()
        return PaneLines(runtime_id=record.runtime_id, lines=tuple(_redact_lines(shown[-count:])))

    async def spawn(self, req: SpawnRuntime, claims: Claims) -> Spawned:
        require_id("agent_id", req.agent_id)
        require_id("workspace_id", req.workspace_id)
        need(claims, "operate", req.workspace_id)
        if not req.command:
            raise InvalidArgument("command is required: the agent's argument vector (no shell)")
        if req.kind and req.kind not in self._kinds.kinds:
            known = ", ".join(sorted(self._kinds.kinds))
            raise InvalidArgument(f"kind must be a configured agent kind ({known})")
        if req.cwd and not await asyncio.to_thread(os.path.isdir, req.cwd):
            raise InvalidArgument("cwd must be an existing directory")
        try:
            record = await self._start(req)
        except (TerminalError, TimeoutError, OSError) as error:
            raise Unavailable(f"tmux could not start the agent: {error}") from None
        await self._audit(
            actor=claims.subject,
            action="supervisor.spawn",
            subject=record.runtime_id,
            outcome="started",
            agent_id=req.agent_id,
            workspace_id=req.workspace_id,
            role=req.role,
            kind=record.kind,
        )
        self.on_started(record)
        session = session_name(self._settings.session_prefix, req.workspace_id)
        return Spawned(
            runtime=self._view(record), attach_command=attach_command(self._settings.tmux_socket, session)
        )

    async def _start(self, req: SpawnRuntime) -> RuntimeRecord:
        runtime_id = f"rt-{uuid.uuid4().hex[:12]}"
        cwd = req.cwd or None
        env = self._access.runtime_env(runtime_id, req.workspace_id)
        session = session_name(self._settings.session_prefix, req.workspace_id)
        window = re.sub(r"[^A-Za-z0-9_-]", "_", req.role or req.agent_id)[:30]
        argv = list(req.command)
        pane_id, pid = await self._terminal.start_agent(session, window, argv, env=env, cwd=cwd)
        record = RuntimeRecord(
            runtime_id=runtime_id,
            agent_id=req.agent_id,
            workspace_id=req.workspace_id,
            pty_target=pane_id,
            registered_at=self._clock.wall(),
            session_id=req.session_id,
            pid=pid,
            kind=req.kind or "generic",
            role=req.role,
            managed=True,
            command=tuple(argv),
            cwd=cwd or _process_cwd(pid),
        )
        return await self._registry.add(record)


def _process_cwd(pid: int) -> str:
    """The working directory of a process of ours (empty when it cannot be read)."""
    if pid <= 0:
        return ""
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return ""


def _redact_lines(lines: list[str]) -> list[str]:
    """Pane text leaves the supervisor only through the redaction engine; what it cannot make safe is withheld."""
    redacted = redact_text("\n".join(lines))
    if redacted is None:
        return ["[withheld: the pane's text could not be shown safely]"]
    return redacted.split("\n")
