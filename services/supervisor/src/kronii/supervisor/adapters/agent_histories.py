"""An agent's own record of the prompts it took (core/agent_history.py): the file its kind names,
found in the agent's own environment (adapters/agent_worlds.py), marked before a prompt is typed
and read from that mark while the supervisor waits for the agent to take it."""

from __future__ import annotations

import asyncio
import os

from kronii.supervisor.adapters.agent_worlds import AgentWorlds
from kronii.supervisor.core.agent_history import HistoryMark, history_path, names_prompt, prompts_in
from kronii.supervisor.core.agent_kinds import AgentKind
from kronii.supervisor.core.model import RuntimeRecord

__all__ = ["AgentHistories", "HistoryMark"]

# Read at most this much of what the file gained (a prompt is at most 16 KiB).
_MOST = 1024 * 1024


class AgentHistories:
    def __init__(self, worlds: AgentWorlds) -> None:
        self._worlds = worlds

    async def mark(self, record: RuntimeRecord, kind: AgentKind) -> HistoryMark | None:
        """Where the agent's history ends now, or None when its kind keeps none (or it cannot be
        found in the agent's environment)."""
        if not kind.history_files:
            return None
        world = await self._worlds.recorded(record.runtime_id)
        if world is None:
            await self._worlds.note(record)
            world = await self._worlds.recorded(record.runtime_id)
        env = dict(world.env) if world is not None else {}
        path = history_path(kind.history_files, env, world.cwd if world is not None else record.cwd)
        if not path:
            return None
        size = await asyncio.to_thread(_size, path)
        return HistoryMark(path, size, kind.history_field)

    async def took(self, mark: HistoryMark, prompt: str) -> bool:
        """The agent recorded `prompt` after the mark."""
        data = await asyncio.to_thread(_read_from, mark.path, mark.size)
        return names_prompt(prompts_in(data, mark.field), prompt)


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0  # not written yet: everything in it later is new


def _read_from(path: str, offset: int) -> bytes:
    try:
        with open(path, "rb") as file:
            file.seek(offset)
            return file.read(_MOST)
    except OSError:
        return b""
