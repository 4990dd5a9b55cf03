"""Writing a prompt into an agent's pane and watching what becomes of it.

The order of checks follows what the systems before learned (docs/architecture.md): look before
writing (is the registered agent in the foreground, is a person typing); one short line as literal
keys, anything else through a named buffer and bracketed paste; a pause; the named submit key;
then look for the text still sitting in the input box before trusting any change on screen.
"""

from __future__ import annotations

import asyncio
import enum
import os
from dataclasses import dataclass

from kronii.supervisor.adapters.tmux import (
    SHELLS,
    PaneProbe,
    TmuxControl,
    TmuxError,
    foreground_of,
    process_name,
)
from kronii.supervisor.core.model import PaneFacts
from kronii.supervisor.core.params import AgentKind
from kronii.supervisor.core.payload import Payload
from kronii.supervisor.core.screen import input_text, looks_typed, screen_hash

__all__ = ["Look", "PaneDriver", "PaneState", "Written"]


class PaneState(enum.StrEnum):
    ACKED = "acked"
    TYPED = "typed_not_submitted"
    PENDING = "pending"
    GONE = "gone"


@dataclass(frozen=True, slots=True)
class Look:
    facts: PaneFacts
    probe: PaneProbe | None


@dataclass(frozen=True, slots=True)
class Written:
    # The screen just before the submit key: a later change is the agent reacting.
    before: str
    # A retry found the text still in the box and only pressed the submit key.
    submit_only: bool


def _same_group(pid: int, group: int) -> bool:
    try:
        return pid == group or os.getpgid(pid) == group
    except OSError:
        return False


class PaneDriver:
    def __init__(self, tmux: TmuxControl) -> None:
        self.tmux = tmux

    async def look(self, target: str, registered_pid: int, kind: AgentKind) -> Look:
        try:
            probe = await self.tmux.probe(target)
        except (TmuxError, TimeoutError, ValueError):
            return Look(PaneFacts(exists=False, agent_in_foreground=False), None)
        if probe.dead:
            return Look(PaneFacts(exists=False, agent_in_foreground=False), probe)
        group = foreground_of(probe.pane_pid)  # one small /proc read
        leader = process_name(group) if group else ""
        pid = registered_pid or probe.pane_pid
        in_front = group is not None and _same_group(pid, group) and leader not in SHELLS
        draft = input_text(probe.screen, probe.cursor_y, kind.input_marker) if kind.input_marker else ""
        activity = max(probe.human_client_activity) if probe.human_client_activity else None
        return Look(
            PaneFacts(
                exists=True,
                agent_in_foreground=in_front,
                foreground_command=leader or probe.current_command,
                human_activity_at=activity,
                draft=draft,
            ),
            probe,
        )

    async def _box(self, target: str, kind: AgentKind) -> tuple[str, str]:
        cursor_y, screen = await self.tmux.screen(target)
        return input_text(screen, cursor_y, kind.input_marker), screen_hash(screen)

    async def write(self, target: str, payload: Payload, kind: AgentKind, *, attempt: int) -> Written:
        """Type or paste the prompt, pause, press the submit key. A retry (attempt > 1) whose text is
        still in the input box only presses the submit key: a prompt is never pasted twice."""
        submit_only = False
        if attempt > 1:
            box, _ = await self._box(target, kind)
            submit_only = looks_typed(box, payload.last_line)
        if not submit_only:
            if payload.literal:
                await self.tmux.send_literal(target, payload.text)
            else:
                await self.tmux.paste(target, payload.text)
            if kind.submit_pause_secs:
                await asyncio.sleep(kind.submit_pause_secs)
        _, before = await self._box(target, kind)
        await self.tmux.send_keys(target, kind.submit_keys)
        return Written(before=before, submit_only=submit_only)

    async def resubmit(self, target: str, kind: AgentKind) -> str:
        _, before = await self._box(target, kind)
        await self.tmux.send_keys(target, kind.submit_keys)
        return before

    async def state(self, target: str, payload: Payload, kind: AgentKind, before: str) -> PaneState:
        try:
            box, now = await self._box(target, kind)
        except (TmuxError, TimeoutError):
            return PaneState.GONE
        if looks_typed(box, payload.last_line):
            return PaneState.TYPED
        return PaneState.ACKED if now != before else PaneState.PENDING
