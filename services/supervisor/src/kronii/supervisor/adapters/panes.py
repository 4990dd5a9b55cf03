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
import time
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
from kronii.supervisor.core.idle_screen import (
    IdleScreen,
    ScreenMemory,
    ScreenRead,
    Shot,
    Verdict,
    awaits_more,
    holds_typed,
    normal,
    read,
    same_screen,
    shows_typed,
)
from kronii.supervisor.core.model import PaneFacts
from kronii.supervisor.core.pane_reports import Baseline, Look, PaneProbe, Written
from kronii.supervisor.core.payload import Payload
from kronii.supervisor.core.screen import StyledLine, echo_count, parse_screen

__all__ = ["Baseline", "Look", "PaneDriver", "Written"]

_T = TypeVar("_T")


def _plain(lines: tuple[StyledLine, ...]) -> tuple[str, ...]:
    """The screen as compared for a change: digits, blanks and frames aside (a clock, a timer)."""
    return tuple(normal(line.text) for line in lines)


def _lines(payload: Payload) -> int:
    return payload.text.count("\n") + 1


def _generic(kind: AgentKind) -> bool:
    """A kind that declares no input marker is read against its own idle screen."""
    return not kind.input_marker


def _same_group(pid: int, group: int) -> bool:
    try:
        return pid == group or os.getpgid(pid) == group
    except OSError:
        return False


# A generic agent's screen is looked at again this often, this many times, until it is still.
SETTLE_STEP_SECS = 0.1
SETTLE_LOOKS = 12
# How long typed text may take to show on the agent's screen before it is taken back.
SHOW_SECS = 3.0
# At most this long the supervisor's own typed prompt keeps a pane's idle screen from being taken
# anew, should nothing say its delivery was decided.
OWN_TEXT_HOLD_SECS = 60.0
# A submit key pressed again waits at most this long for the agent to show it read the first one.
CATCH_UP_SECS = 2.0

_STATE_OF = {
    Verdict.IDLE: AgentState.IDLE,
    Verdict.DRAFT: AgentState.DRAFT,
    Verdict.BLOCKED: AgentState.BLOCKED,
    Verdict.BUSY: AgentState.WORKING,
    Verdict.CHANGING: AgentState.WORKING,
    Verdict.UNSETTLED: AgentState.STARTING,
}


def _shot(probe: PaneProbe, at: float) -> Shot:
    rows = tuple(line.text.rstrip() for line in parse_screen(probe.screen))
    person = max(probe.human_client_activity) if probe.human_client_activity else None
    return Shot(rows, probe.cursor_x, probe.cursor_y, at, person, probe.cursor_visible)


def _generic_facts(probe: PaneProbe, seen: ScreenRead, in_front: bool, leader: str) -> PaneFacts:
    """What admission needs, from a generic agent's screen read against its idle screen."""
    state = _STATE_OF[seen.verdict]
    return PaneFacts(
        exists=True,
        agent_in_foreground=in_front,
        foreground_command=leader or probe.current_command,
        human_activity_at=max(probe.human_client_activity) if probe.human_client_activity else None,
        draft=seen.draft,
        agent_state=state.value,
        input_line=seen.verdict not in (Verdict.BUSY, Verdict.CHANGING),
        dialog=seen.evidence if seen.verdict is Verdict.BLOCKED else "",
    )


class PaneDriver:
    def __init__(self, tmux: TmuxControl, wall: Callable[[], float] = time.time) -> None:
        self.tmux = tmux
        self._wall = wall
        # What each generic agent's pane showed: its idle screen and the last look (core/idle_screen.py).
        self._memory: dict[str, ScreenMemory] = {}
        # The screen just before the supervisor typed into a pane, to see the agent take it.
        self._before: dict[str, Shot] = {}
        self._screen_before: dict[str, tuple[str, ...]] = {}
        # Panes holding the supervisor's own typed prompt, not yet known taken or taken back, and
        # until when at most (a trigger that stopped minding it must not freeze the pane's memory).
        self._own_text_until: dict[str, float] = {}
        # The screen on which the typed prompt showed, just before the submit key was pressed.
        self._typed_shot: dict[str, Shot] = {}

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
        # A shell in front is what the agent exited back to, unless the kind says the agent is a
        # shell (bash taking prompts as command lines) and it is the registered process itself.
        shell_ok = kind.shell_is_agent and group == pid
        in_front = group is not None and _same_group(pid, group) and (leader not in SHELLS or shell_ok)
        if _generic(kind):
            seen = await self._read_generic(target, probe, kind)
            return Look(_generic_facts(probe, seen, in_front, leader), probe)
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

    async def _read_generic(self, target: str, probe: PaneProbe, kind: AgentKind) -> ScreenRead:
        """The screen read against the pane's memory; while it is changing or not yet seen still,
        looked at again a few times (a still screen needs two looks to be known)."""
        seen = self._remember(target, _shot(probe, self._wall()), kind)
        for _ in range(SETTLE_LOOKS):
            if seen.verdict not in (Verdict.CHANGING, Verdict.UNSETTLED):
                break
            await asyncio.sleep(SETTLE_STEP_SECS)
            probe_again = await self._probe(target)
            if isinstance(probe_again, str) or probe_again.dead:
                break
            seen = self._remember(target, _shot(probe_again, self._wall()), kind)
        return seen

    def _remember(self, target: str, shot: Shot, kind: AgentKind) -> ScreenRead:
        own_text = time.monotonic() < self._own_text_until.get(target, 0.0)
        seen = read(self._memory.get(target, ScreenMemory()), shot, kind.blocked_patterns, own_text=own_text)
        self._memory[target] = seen.memory
        return seen

    async def _shot_now(self, target: str) -> Shot:
        probe = await self._asked(lambda: self.tmux.probe(target))
        return _shot(probe, self._wall())

    async def _read(self, target: str, kind: AgentKind) -> tuple[Reading, tuple[StyledLine, ...]]:
        """The screen as it is now (never an earlier look): cursor and text in one round trip."""
        cursor_x, cursor_y, screen = await self._asked(lambda: self.tmux.screen_at(target))
        lines = parse_screen(screen)
        return classify(lines, cursor_y, kind, cursor_x=cursor_x), lines

    async def baseline(self, target: str, payload: Payload, kind: AgentKind) -> Baseline:
        reading, lines = await self._read(target, kind)
        self._screen_before[target] = _plain(lines)
        return Baseline(echo_count(lines, reading.box.top, echo_needle(payload.text)), reading.working)

    async def write(self, target: str, payload: Payload, kind: AgentKind, *, attempt: int) -> Written:
        """Type or paste the prompt, pause, press the submit key. A retry (attempt > 1) only
        presses the submit key, and only when the prompt still sits in the input box: a prompt is
        never typed twice."""
        if _generic(kind):
            return await self._write_generic(target, payload, kind, attempt=attempt)
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

    async def _write_generic(
        self, target: str, payload: Payload, kind: AgentKind, *, attempt: int
    ) -> Written:
        """Type, then find the text on the screen before pressing the submit key: in the input
        area, it is submitted; anywhere else, or nowhere, or with a person's keys arriving
        meanwhile, it is taken back key for key and nothing is submitted."""
        idle = self._memory.get(target, ScreenMemory()).idle
        if attempt > 1:
            if not self._still_typed(target, await self._shot_now(target), payload):
                return Written(submit_only=False, nothing=True)
            await self.tmux.send_keys(target, kind.submit_keys)
            return Written(submit_only=True)
        before = await self._shot_now(target)
        self._before[target] = before
        self._own_text_until[target] = time.monotonic() + OWN_TEXT_HOLD_SECS
        if payload.literal:
            await self.tmux.send_literal(target, payload.text)
        else:
            await self.tmux.paste(target, payload.text)
        why, person, landed = await self._where_it_landed(target, payload, idle, before)
        if why:
            await self._take_back(target, payload)
            self._own_text_until.pop(target, None)
            return Written(submit_only=False, removed=why, person_typed=person)
        self._typed_shot[target] = landed
        if kind.submit_pause_secs:
            await asyncio.sleep(kind.submit_pause_secs)
        await self.tmux.send_keys(target, kind.submit_keys)
        return Written(submit_only=False)

    async def _where_it_landed(
        self, target: str, payload: Payload, idle: IdleScreen | None, before: Shot
    ) -> tuple[str, bool, Shot]:
        """("", False, the screen) once the typed text shows in the input area; else why not,
        whether a person's keys were the reason, and the last look."""
        give_up = time.monotonic() + SHOW_SECS
        while True:
            shot = await self._shot_now(target)
            if shot.person_at is not None and shot.person_at != before.person_at:
                return "a person pressed keys in the pane while the prompt was being typed", True, shot
            if holds_typed(idle, shot, payload.last_line, _lines(payload)):
                return "", False, shot
            if shows_typed(shot, payload.last_line) and time.monotonic() >= give_up:
                return "the typed text showed outside the agent's input area", False, shot
            if time.monotonic() >= give_up:
                why = f"the typed text did not show on the agent's screen within {SHOW_SECS:g} s"
                return why, False, shot
            await asyncio.sleep(0.02)

    def _still_typed(self, target: str, shot: Shot, payload: Payload) -> bool:
        """The prompt sits in the input line, or the REPL asks for more of it (Enter gave it a
        new line): the submit key may be pressed again, the prompt is never typed again."""
        idle = self._memory.get(target, ScreenMemory()).idle
        return holds_typed(idle, shot, payload.last_line, _lines(payload)) or awaits_more(idle, shot)

    async def _take_back(self, target: str, payload: Payload) -> None:
        """As many backspaces as characters were typed (a collapsed paste goes with fewer; the
        rest fall on an empty line)."""
        await self.tmux.send_keys(target, ["-N", str(len(payload.text)), "BSpace"])

    async def clear_typed(self, target: str, payload: Payload, kind: AgentKind) -> bool:
        """Take back a prompt left in a generic agent's input area (never submitted)."""
        if not _generic(kind):
            return False
        idle = self._memory.get(target, ScreenMemory()).idle
        try:
            if not holds_typed(idle, await self._shot_now(target), payload.last_line, _lines(payload)):
                return False
            await self._take_back(target, payload)
            return True
        finally:
            self._own_text_until.pop(target, None)

    async def resubmit(self, target: str, payload: Payload, kind: AgentKind) -> bool:
        """Press the submit key once more, only if the prompt still sits in the box."""
        if _generic(kind):
            shot = await self._caught_up(target)
            if not self._still_typed(target, shot, payload):
                return False
            await self.tmux.send_keys(target, kind.submit_keys)
            return True
        reading, _ = await self._read(target, kind)
        if not holds_prompt(reading.box, payload.last_line):
            return False
        await self.tmux.send_keys(target, kind.submit_keys)
        return True

    async def _caught_up(self, target: str) -> Shot:
        """The screen once the agent has drawn something since the typed text showed (it read the
        submit key, if only as a new line), or after CATCH_UP_SECS. An agent that takes Enter
        right after a paste for a new line (Gemini CLI, for 40 ms) and is starved of CPU reads a
        second Enter in that same window too, unless it waits for the agent to catch up."""
        landed = self._typed_shot.get(target)
        give_up = time.monotonic() + CATCH_UP_SECS
        while True:
            shot = await self._shot_now(target)
            if landed is None or not shot.same_picture(landed) or time.monotonic() >= give_up:
                return shot
            await asyncio.sleep(0.05)

    def done_with(self, target: str) -> None:
        """The delivery of the prompt typed into `target` is decided: its screen may become the
        agent's idle screen again."""
        self._own_text_until.pop(target, None)
        self._typed_shot.pop(target, None)

    async def check(self, target: str, payload: Payload, kind: AgentKind, before: Baseline) -> Delivery:
        if _generic(kind):
            return await self._check_generic(target, payload)
        try:
            reading, lines = await self._read(target, kind)
            dead, _ = await self.tmux.pane_exit(target)
        except (TmuxError, TimeoutError, ValueError) as error:
            # Gone only when tmux says so; a connection being re-opened is no news (look again).
            return Delivery.GONE if says_gone(error) else Delivery.PENDING
        if dead:
            return Delivery.GONE
        earlier = self._screen_before.get(target)
        return confirm(
            reading, lines, prompt=payload.text, last_line=payload.last_line, echoes_before=before.echoes,
            was_working=before.working, screen_changed=earlier is not None and earlier != _plain(lines),
        )  # fmt: skip

    async def _check_generic(self, target: str, payload: Payload) -> Delivery:
        """Taken when the text left the input area and the screen is not what it was before the
        typing (its echo, the agent's answer or work); still there is typed-not-submitted."""
        try:
            shot = await self._shot_now(target)
            dead, _ = await self.tmux.pane_exit(target)
        except (TmuxError, TimeoutError, ValueError) as error:
            return Delivery.GONE if says_gone(error) else Delivery.PENDING
        if dead:
            self._own_text_until.pop(target, None)
            return Delivery.GONE
        if self._still_typed(target, shot, payload):
            return Delivery.TYPED
        before = self._before.get(target)
        if before is not None and same_screen(before, shot):
            return Delivery.PENDING
        self._own_text_until.pop(target, None)
        return Delivery.SUBMITTED
