"""Each runtime's world (core/agent_world.py): its environment and directory, read from its
process while it runs and recorded in a 0600 file per runtime under the supervisor's data
directory, so that a resume or a fresh session started after the agent is gone (or after a restart
of the supervisor) still runs where the agent ran. An agent's environment holds its keys: it stays
on this host, beside the supervisor's own token key, and never goes into the database or an API."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from pathlib import Path

from kronii.supervisor.adapters.processes import agent_world
from kronii.supervisor.core.agent_world import AgentWorld
from kronii.supervisor.core.model import RuntimeRecord
from kronii.supervisor.ports import Terminal, TerminalError

__all__ = ["AgentWorlds"]

log = logging.getLogger(__name__)

_RUNTIME_ID = re.compile(r"[A-Za-z0-9_.-]{1,128}")


class AgentWorlds:
    """Reads an agent's world off its process and keeps the last one seen per runtime."""

    def __init__(self, folder: Path, terminal: Terminal) -> None:
        self._folder = folder
        self._terminal = terminal
        # What was last written per runtime, so the reconcile loop writes only on a change.
        self._kept: dict[str, AgentWorld] = {}

    def _path(self, runtime_id: str) -> Path:
        if not _RUNTIME_ID.fullmatch(runtime_id) or runtime_id.startswith("."):
            raise ValueError(f"not a runtime id: {runtime_id!r}")
        return self._folder / f"{runtime_id}.json"

    async def of(self, record: RuntimeRecord, session: str) -> AgentWorld:
        """Where a resume or a fresh session of this runtime's agent runs: the agent's process as
        it runs now, else its world as last recorded, else (the agent gone before it could be
        read) the shell it ran in, else what the tmux session gives its windows (said in `source`)."""
        live = await asyncio.to_thread(agent_world, record.pid, record.kind)
        if live is not None and live[1]:
            return live[0]
        kept = await self.recorded(record.runtime_id)
        if kept is not None:
            return kept
        if live is not None:
            return live[0]
        return await self._session_world(session)

    async def note(self, record: RuntimeRecord) -> None:
        """Record the world of the runtime's agent when it can be read and differs from the one
        kept (registration, and each look of the reconcile loop while it runs)."""
        live = await asyncio.to_thread(agent_world, record.pid, record.kind)
        if live is None or not live[1]:
            return
        world = live[0]
        kept = self._kept.get(record.runtime_id)
        if kept is not None and (kept.env, kept.cwd, kept.pid) == (world.env, world.cwd, world.pid):
            return
        await self.keep(record.runtime_id, world)

    async def keep(self, runtime_id: str, world: AgentWorld) -> None:
        path = self._path(runtime_id)
        data = json.dumps(world.to_dict(), sort_keys=True)
        try:
            await asyncio.to_thread(_write_private, path, data)
        except OSError as error:
            log.warning("the environment of runtime %s could not be recorded: %s", runtime_id, error)
            return
        self._kept[runtime_id] = world

    async def recorded(self, runtime_id: str) -> AgentWorld | None:
        if runtime_id in self._kept:
            return self._kept[runtime_id]
        try:
            text = await asyncio.to_thread(self._path(runtime_id).read_text, encoding="utf-8")
            world = AgentWorld.from_dict(json.loads(text))
        except (OSError, ValueError, TypeError) as error:
            if not isinstance(error, FileNotFoundError):
                log.warning("the recorded environment of runtime %s is unreadable: %s", runtime_id, error)
            return None
        recorded = AgentWorld(world.env, world.cwd, world.pid, f"recorded from {world.source or 'its start'}")
        self._kept[runtime_id] = recorded
        return recorded

    async def forget(self, runtime_id: str) -> None:
        self._kept.pop(runtime_id, None)
        try:
            await asyncio.to_thread(self._path(runtime_id).unlink, missing_ok=True)
        except (OSError, ValueError) as error:
            log.warning("the recorded environment of runtime %s stays: %s", runtime_id, error)

    async def _session_world(self, session: str) -> AgentWorld:
        """What tmux gives a new window of `session`: its global environment, then the session's."""
        env: dict[str, str] = {}
        for scope in (["-g"], ["-t", f"={session}"]):
            try:
                lines = await self._terminal.command("show-environment", *scope)
            except (TerminalError, TimeoutError):
                continue  # no such session yet: the global environment is what it will get
            for line in lines:
                name, sep, value = line.partition("=")
                if sep:
                    env[name] = value
                elif name.startswith("-"):
                    env.pop(name[1:], None)
        return AgentWorld(
            env=env, source="the tmux session's environment (the agent's own was never readable)"
        )


def _write_private(path: Path, data: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_suffix(".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(data)
    os.replace(temporary, path)
