"""Writing a prompt into an agent's pane and watching what becomes of it.

The order of checks follows what the systems before learned (docs/architecture.md): look before
writing (is the registered agent in the foreground, is a person typing, is a dialog up); one short
line as literal keys, anything else through a named buffer and bracketed paste; a pause; the named
submit key; then look: the prompt still in the input box is typed-not-submitted, and only its echo
in the transcript (or the agent starting work) counts as taken.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import TypeVar

from kronii.supervisor.adapters.processes import SHELLS, foreground_of, process_name
from kronii.supervisor.adapters.tmux import TmuxControl
from kronii.supervisor.adapters.tmux_connection import TmuxError, says_gone
from kronii.supervisor.core.agent_kinds import AgentKind
from kronii.supervisor.core.agent_state import (
    AgentState,
    Delivery,
    Reading,
    classify,
    confirm,
    echo_needle,
    holds_prompt,
)
from kronii.supervisor.core.model import PaneFacts
from kronii.supervisor.core.pane_reports import Baseline, Look, PaneProbe, Written
from kronii.supervisor.core.payload import Payload
from kronii.supervisor.core.screen import StyledLine, echo_count, parse_screen

__all__ = ["Baseline", "Look", "PaneDriver", "Written"]

_T = TypeVar("_T")


def _same_group(pid: int, group: int) -> bool:
    try:
        return pid == group or os.getpgid(pid) == group
    except OSError:
        return False


class PaneDriver:
    def __init__(self, tmux: TmuxControl) -> None:
        self.tmux = tmux

    async def _asked(self, ask: Callable[[], Awaitable[_T]]) -> _T:
        """A read (no side effect), asked once more when the connection it went out on ended or
        was never attached: the next one is opened and attached first. tmux saying the target
        does not exist, or giving no answer on a live connection, is not asked again."""
        try:
            return await ask()
        except TmuxError as error:
            if says_gone(error) or self.tmux.connected:
                raise
        return await ask()

    async def _probe(self, target: str) -> PaneProbe | str:
        """The pane, or why tmux could not be asked about it (only tmux saying there is no such
        pane makes it gone: that TmuxError is raised)."""
        try:
            return await self._asked(lambda: self.tmux.probe(target))
        except (TmuxError, TimeoutError, ValueError) as error:
            if says_gone(error):
                raise
            return f"tmux did not answer about pane {target}: {error or type(error).__name__}"

    async def look(self, target: str, registered_pid: int, kind: AgentKind) -> Look:
        try:
            probe = await self._probe(target)
        except TmuxError:  # tmux says there is no such pane
            return Look(PaneFacts(exists=False, agent_in_foreground=False, agent_state="exited"), None)
        if isinstance(probe, str):
            # Nothing is known of the pane: not gone, not ready (admission waits for tmux).
            return Look(PaneFacts(agent_in_foreground=False, agent_state="", unanswered=probe), None)
        if probe.dead:
            return Look(PaneFacts(exists=False, agent_in_foreground=False, agent_state="exited"), probe)
        group = foreground_of(probe.pane_pid)  # one small /proc read
        leader = process_name(group) if group else ""
        pid = registered_pid or probe.pane_pid
        in_front = group is not None and _same_group(pid, group) and leader not in SHELLS
        reading = classify(parse_screen(probe.screen), probe.cursor_y, kind, cursor_x=probe.cursor_x)
        activity = max(probe.human_client_activity) if probe.human_client_activity else None
        return Look(
            PaneFacts(
                exists=True,
                agent_in_foreground=in_front,
                foreground_command=leader or probe.current_command,
                human_activity_at=activity,
                draft=reading.draft,
                agent_state=reading.state.value,
                input_line=reading.input_line,
                dialog=reading.evidence if reading.state is AgentState.BLOCKED else "",
            ),
            probe,
            reading,
        )

    async def _read(self, target: str, kind: AgentKind) -> tuple[Reading, tuple[StyledLine, ...]]:
        """The screen as it is now (never an earlier look): cursor and text in one round trip."""
        cursor_x, cursor_y, screen = await self._asked(lambda: self.tmux.screen_at(target))
        lines = parse_screen(screen)
        return classify(lines, cursor_y, kind, cursor_x=cursor_x), lines

    async def baseline(self, target: str, payload: Payload, kind: AgentKind) -> Baseline:
        reading, lines = await self._read(target, kind)
        return Baseline(echo_count(lines, reading.box.top, echo_needle(payload.text)), reading.working)

    async def write(self, target: str, payload: Payload, kind: AgentKind, *, attempt: int) -> Written:
        """Type or paste the prompt, pause, press the submit key. A retry (attempt > 1) only
        presses the submit key, and only when the prompt still sits in the input box: a prompt is
        never typed twice."""
        if attempt > 1:
            reading, _ = await self._read(target, kind)
            if not holds_prompt(reading.box, payload.last_line):
                return Written(submit_only=False, nothing=True)
            await self.tmux.send_keys(target, kind.submit_keys)
            return Written(submit_only=True)
        if payload.literal:
            await self.tmux.send_literal(target, payload.text)
        else:
            await self.tmux.paste(target, payload.text)
        if kind.submit_pause_secs:
            await asyncio.sleep(kind.submit_pause_secs)
        await self.tmux.send_keys(target, kind.submit_keys)
        return Written(submit_only=False)

    async def resubmit(self, target: str, payload: Payload, kind: AgentKind) -> bool:
        """Press the submit key once more, only if the prompt still sits in the box."""
        reading, _ = await self._read(target, kind)
        if not holds_prompt(reading.box, payload.last_line):
            return False
        await self.tmux.send_keys(target, kind.submit_keys)
        return True

    async def check(self, target: str, payload: Payload, kind: AgentKind, before: Baseline) -> Delivery:
        try:
            reading, lines = await self._read(target, kind)
            dead, _ = await self.tmux.pane_exit(target)
        except (TmuxError, TimeoutError, ValueError) as error:
            # Gone only when tmux says so; a connection being re-opened is no news (look again).
            return Delivery.GONE if says_gone(error) else Delivery.PENDING
        if dead:
            return Delivery.GONE
        return confirm(
            reading, lines, prompt=payload.text, last_line=payload.last_line, echoes_before=before.echoes,
            was_working=before.working,
        )  # fmt: skip
