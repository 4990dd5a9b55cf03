"""What an agent is doing, read off its screen the way a person reads it, and whether a prompt the
supervisor typed was really taken. Pure: the adapters hand in the captured screen and process facts.

States (in order of precedence):
- `exited`: the process is gone or the pane is dead.
- `blocked`: a dialog waits for a person (trust this folder, approve a command, sign in). kronii
  never answers it.
- `starting`: the agent has not drawn its input box yet.
- `draft`: a person's unsent text sits in the input box (dim placeholder text does not count).
- `working`: the agent shows its busy line ("esc to interrupt"), or it drew its input line before
  and the cursor is no longer in it (a REPL running what it was given: `Reading.input_line` is
  False, and what is typed now would go to the running program, not to the agent).
- `idle`: the input box is empty.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass

from kronii.supervisor.core.agent_kinds import AgentKind
from kronii.supervisor.core.screen import InputBox, StyledLine, echo_count, input_box, looks_typed

__all__ = [
    "BUSY_EVIDENCE",
    "AgentState",
    "Delivery",
    "Reading",
    "classify",
    "confirm",
    "echo_needle",
    "holds_prompt",
]


class AgentState(enum.StrEnum):
    STARTING = "starting"
    IDLE = "idle"
    DRAFT = "draft"
    WORKING = "working"
    BLOCKED = "blocked"
    EXITED = "exited"


@dataclass(frozen=True, slots=True)
class Reading:
    state: AgentState
    box: InputBox
    # The dialog line or busy line that decided the state, for the operator.
    evidence: str = ""
    working: bool = False

    @property
    def input_line(self) -> bool:
        """The agent's input line is at the cursor: what is typed goes to the agent."""
        return self.box.found

    @property
    def draft(self) -> str:
        return self.box.text if self.state is AgentState.DRAFT else ""


def _find(lines: Sequence[StyledLine], patterns: Sequence[str]) -> str:
    lowered = [p.lower() for p in patterns if p]
    for line in lines:
        text = line.text.lower()
        if any(p in text for p in lowered):
            return line.text.strip()
    return ""


def _match(lines: Sequence[StyledLine], patterns: Sequence[str]) -> str:
    compiled = [re.compile(p, re.IGNORECASE) for p in patterns if p]
    for line in lines:
        if any(c.search(line.text) for c in compiled):
            return line.text.strip()
    return ""


BUSY_EVIDENCE = "its input line is not on screen: it is running what it was given"


def classify(
    lines: Sequence[StyledLine],
    cursor_y: int,
    kind: AgentKind,
    *,
    alive: bool = True,
    cursor_x: int | None = None,
) -> Reading:
    box = input_box(
        lines, cursor_y, kind.input_marker, cursor_x=cursor_x, continuation=kind.continuation_marker
    )
    if not alive:
        return Reading(AgentState.EXITED, box)
    dialog = _find(lines, kind.blocked_patterns)
    if dialog:
        return Reading(AgentState.BLOCKED, box, dialog)
    if not box.found and box.marker_above:
        return Reading(AgentState.WORKING, box, BUSY_EVIDENCE, working=True)
    if not box.found:
        return Reading(AgentState.STARTING, box)
    starting = _match(lines, kind.starting_patterns)
    if starting:
        return Reading(AgentState.STARTING, box, starting)
    busy = _find(lines[: box.top], kind.working_patterns) or _find(
        lines[box.bottom + 1 :], kind.working_patterns
    )
    if box.text:
        return Reading(AgentState.DRAFT, box, working=bool(busy))
    if busy:
        return Reading(AgentState.WORKING, box, busy, working=True)
    return Reading(AgentState.IDLE, box)


def echo_needle(prompt: str) -> str:
    """The part of a prompt searched for in the transcript: the start of its first line, short
    enough not to wrap on any pane."""
    for line in prompt.split("\n"):
        if line.strip():
            return " ".join(line.split())[:40]
    return ""


# Codex shows a long paste in its box as this stand-in, not as the text itself.
_COLLAPSED_PASTE = re.compile(r"\[Pasted Content \d+ chars\]")


def holds_prompt(box: InputBox, last_line: str) -> bool:
    """The box holds the prompt the supervisor typed (its last line, or Codex's collapsed paste)."""
    return box.found and (looks_typed(box.text, last_line) or bool(_COLLAPSED_PASTE.search(box.text)))


class Delivery(enum.StrEnum):
    SUBMITTED = "submitted"
    TYPED = "typed_not_submitted"
    PENDING = "pending"
    GONE = "gone"


def confirm(
    reading: Reading, lines: Sequence[StyledLine], *, prompt: str, last_line: str, echoes_before: int,
    was_working: bool, screen_changed: bool = False,
) -> Delivery:  # fmt: skip
    """Was the prompt taken? Only when it left the input box and the agent shows it took it: its
    echo (or queued entry) appeared in the transcript, it started working, or the screen is not
    what it was before the typing (a screen full of earlier prompts that start alike scrolls one
    echo off for each new one, so a count of echoes alone stops going up)."""
    if reading.state is AgentState.EXITED:
        return Delivery.GONE
    if holds_prompt(reading.box, last_line):
        # A starting agent keeps a submitted prompt in its box and sends it once it can.
        return Delivery.PENDING if reading.state is AgentState.STARTING else Delivery.TYPED
    if reading.state is AgentState.BLOCKED:
        return Delivery.PENDING
    echoed = echo_count(lines, reading.box.top, echo_needle(prompt)) > echoes_before
    # A changed screen counts only with the box empty: part of a prompt still being drawn in
    # (a paste arriving in pieces) is not taken yet.
    emptied = screen_changed and reading.box.found and not reading.box.text
    if echoed or emptied or (reading.working and not was_working):
        return Delivery.SUBMITTED
    return Delivery.PENDING
