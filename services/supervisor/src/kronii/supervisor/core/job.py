"""A trigger between requests (Job) and the small rules every use case shares about it: ids,
override reasons, tmux session names, and the sentence admission gives for an outcome."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kronii.foundation.errors import InvalidArgument
from kronii.supervisor.core.model import CollisionGate, Situation
from kronii.supervisor.core.table import Signal

__all__ = [
    "OVERRIDE_PREFIXES",
    "SESSION_KINDS",
    "Job",
    "admission_detail",
    "attach_command",
    "require_id",
    "session_name",
]

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$")
OVERRIDE_PREFIXES = ("human_override:", "coordinator_override:")
# Agent kinds whose session id can be found in the files the agent writes (adapters/sessions.py).
SESSION_KINDS = frozenset({"codex", "claude"})


def require_id(name: str, value: str) -> str:
    if not _ID.match(value):
        raise InvalidArgument(f"{name} is required: 1 to 128 letters, digits or ._:@/- (got {value!r})")
    return value


def session_name(prefix: str, workspace_id: str) -> str:
    return prefix + re.sub(r"[^A-Za-z0-9_-]", "_", workspace_id)


def attach_command(socket: str | None, session: str) -> str:
    """What a person types to watch the agents of a workspace."""
    sock = f" -S {socket}" if socket else ""
    return f"tmux{sock} attach -t {session}"


@dataclass
class Job:
    """One trigger between requests: what was asked, by whom, and where its lifecycle stands."""

    trigger_id: str
    agent_id: str
    workspace_id: str
    thread_id: str
    prompt: str
    literal: bool
    ack_timeout_secs: float
    force: bool
    reason: str
    caller: str
    request_id: str
    created_at: float
    runtime_id: str = ""
    progress_marker: str = ""
    finding_key: str = ""
    machine: dict[str, Any] = field(default_factory=dict)
    admitted: bool = False
    typed_not_submitted: bool = False
    acked_by: str = ""
    gate: str = CollisionGate.NOT_EVALUATED.value
    # The transcript before the prompt was typed (see PaneDriver.baseline), kept with the job so
    # a restarted supervisor can still tell whether the agent took it.
    echoes_before: int = 0
    was_working: bool = False
    detail: str = ""


def _operator_busy(situation: Situation) -> str:
    pane = situation.pane
    if pane is not None and pane.draft:
        return "a person's unsent text is in the agent's input box; it is left alone"
    return "a person typed in the pane within the quiet window"


def _dialog(situation: Situation) -> str:
    dialog = situation.pane.dialog if situation.pane is not None else ""
    return f"a dialog waits for a person on the agent's screen: {dialog!r}; kronii never answers it"


def _not_agent(situation: Situation) -> str:
    command = situation.pane.foreground_command if situation.pane is not None else ""
    return f"the pane's foreground process is {command!r}, not the registered agent"


def _unanswered(situation: Situation) -> str:
    return situation.pane.unanswered if situation.pane is not None else "tmux did not answer"


def _holds_desktop(situation: Situation) -> str:
    hold = situation.desktop_hold
    held = hold.describe() if hold is not None else "the user holds the desktop"
    return f"{held}; nothing is typed into its panes until they hand it back"


_STARTING = "the agent has not drawn its input box yet"
_BUSY = (
    "the agent is busy running what it was given (its input line is not on screen); "
    "nothing is typed until it is back"
)
_GONE = "the agent's process or pane is gone"

# The sentence for each signal admission decides an outcome by (a fixed one, or one read off the
# situation).
_DETAILS: dict[Signal, Callable[[Situation], str]] = {
    Signal.OPERATOR_BUSY: _operator_busy,
    Signal.AGENT_BLOCKED: _dialog,
    Signal.BLOCKED_TOO_LONG: _dialog,
    Signal.AGENT_STARTING: lambda _s: _STARTING,
    Signal.STARTING_TOO_LONG: lambda _s: _STARTING,
    Signal.AGENT_BUSY: lambda _s: _BUSY,
    Signal.BUSY_TOO_LONG: lambda _s: _BUSY,
    Signal.PANE_NOT_AGENT: _not_agent,
    Signal.TMUX_UNANSWERED: lambda s: (
        f"{_unanswered(s)}; the pane is not taken as gone, the trigger waits for tmux"
    ),
    Signal.TMUX_UNANSWERED_TOO_LONG: lambda s: (
        f"{_unanswered(s)}, past the maximum defer; nothing was typed, the pane was not taken as gone"
    ),
    Signal.RUNTIME_UNAVAILABLE: lambda _s: _GONE,
    Signal.CRASH_LOOP: lambda _s: _GONE,
    Signal.SESSION_STALE: lambda _s: _GONE,
    Signal.COLLISION_MAX_DEFER: lambda _s: "a person kept typing past the maximum defer",
    Signal.USER_HOLDS_DESKTOP: _holds_desktop,
}


def admission_detail(signal: Signal, situation: Situation) -> str:
    """A sentence for the outcome when admission decides it (empty when delivery goes ahead)."""
    detail = _DETAILS.get(signal)
    return detail(situation) if detail is not None else ""
