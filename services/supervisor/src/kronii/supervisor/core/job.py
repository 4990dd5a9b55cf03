"""A trigger between requests (Job) and the small rules every use case shares about it: ids,
override reasons, tmux session names, and the sentence admission gives for an outcome."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kronii.foundation.errors import InvalidArgument
from kronii.supervisor.core.model import Backend, CollisionGate, ErrorCode, Result, Situation
from kronii.supervisor.core.table import Signal

__all__ = [
    "OVERRIDE_PREFIXES",
    "RETRY_ADVICE",
    "SESSION_KINDS",
    "Job",
    "admission_detail",
    "attach_command",
    "cooldown_detail",
    "deferral_detail",
    "ended_detail",
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


def _cooling(situation: Situation) -> str:
    failed = situation.guards.consecutive_failures
    return f"the agent's last {failed} triggers failed; nothing is typed to it until its cooldown ends"


def _rate_limited(situation: Situation) -> str:
    tried = len(situation.guards.recent_attempts)
    return (
        f"{tried} triggers were typed on this thread and agent within the rate window; "
        "this one waits until the oldest leaves it"
    )


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
    Signal.CRASH_LOOP: lambda _s: f"{_GONE}, and it failed again and again lately (a crash loop)",
    Signal.SESSION_STALE: lambda _s: f"{_GONE}, and its session is too old to resume",
    Signal.COLLISION_MAX_DEFER: lambda _s: "a person kept typing past the maximum defer",
    Signal.USER_HOLDS_DESKTOP: _holds_desktop,
    Signal.COOLDOWN: _cooling,
    Signal.RATE_LIMITED: _rate_limited,
    Signal.PAUSED: lambda _s: (
        "an operator paused this agent's runtime; triggers wait until it is resumed (or forced)"
    ),
    Signal.THREAD_BLOCKED: lambda _s: (
        "the loop guard blocked this thread (too many turns without progress, or the same finding "
        "unresolved again and again); nothing was typed, `kronii agents unblock` clears it"
    ),
    Signal.LOOP_SUPPRESSED: lambda _s: (
        "the same prompt as the thread's last trigger, and the agent showed no progress since; "
        "it was not typed again"
    ),
}


def admission_detail(signal: Signal, situation: Situation) -> str:
    """A sentence for the outcome when admission decides it (empty when delivery goes ahead)."""
    detail = _DETAILS.get(signal)
    return detail(situation) if detail is not None else ""


def cooldown_detail(failed: int, why: str, wait_secs: float) -> str:
    """Why an agent is cooling down, and for how long yet: "the agent's last 3 triggers failed (the
    prompt stayed in its input box); waiting 42 s before typing to it again"."""
    cause = f" ({why})" if why else ""
    return (
        f"the agent's last {failed} triggers failed{cause}; waiting {max(0, round(wait_secs))} s "
        "before typing to it again (a delivery ends the wait; other agents are not held)"
    )


# Told with every outcome that may hide a prompt that ran: a caller who retries it under a new
# trigger_id would have the agent run it twice.
RETRY_ADVICE = (
    "the prompt may have run: ask again with the same trigger_id (it returns this outcome), "
    "never under a new one, or the agent may run it twice"
)

# A sentence for every code, when nothing more particular was said on the way.
_CODE_DETAILS: dict[ErrorCode, str] = {
    ErrorCode.TRIGGER_RATE_LIMITED: "too many triggers on this thread and agent within the rate window",
    ErrorCode.THREAD_AUTO_BLOCKED: "the loop guard blocked this thread; `kronii agents unblock` clears it",
    ErrorCode.TRIGGER_LOOP_SUPPRESSED: "the same prompt again with no progress since; not typed again",
    ErrorCode.TRIGGER_COOLDOWN: "the agent's last triggers failed; it is left alone until its cooldown ends",
    ErrorCode.RUNTIME_PAUSED: "an operator paused this agent's runtime",
    ErrorCode.OPERATOR_BUSY: "a person is typing in the agent's pane",
    ErrorCode.COLLISION_MAX_DEFER: "a person kept typing past the maximum defer",
    ErrorCode.PANE_NOT_AGENT: "the pane's foreground process is not the registered agent",
    ErrorCode.RUNTIME_OFFLINE: _GONE,
    ErrorCode.WRITE_FAILED: "writing the prompt to the agent's pane failed",
    ErrorCode.ACK_TIMEOUT: "the prompt was typed but the agent showed no sign of taking it",
    ErrorCode.RESUME_FAILED: "resuming the agent's session failed",
    ErrorCode.SPAWN_FAILED: "a fresh session of the agent did not start",
    ErrorCode.FALLBACK_EXHAUSTED: "resuming the agent's session failed and nothing else could start it",
    ErrorCode.TRIGGER_IN_FLIGHT: "the same trigger_id is being worked on right now",
    ErrorCode.AGENT_BLOCKED: "a dialog waits for a person on the agent's screen; kronii never answers it",
    ErrorCode.AGENT_STARTING: _STARTING,
    ErrorCode.AGENT_BUSY: _BUSY,
    ErrorCode.TYPED_NOT_SUBMITTED: "the prompt is still in the agent's input box: the submit key did not send it",
    ErrorCode.USER_HOLDS_DESKTOP: "the user holds the desktop; nothing is typed until they hand it back",
    ErrorCode.TMUX_UNAVAILABLE: "tmux did not answer about the agent's pane",
}

_THROUGH = {
    Backend.RESUME: "the prompt went to the agent's resumed session",
    Backend.SPAWN: "the prompt went to a fresh session of the agent",
}

_ACKED_BY = {
    "ack": "an acknowledgement came for it",
    "heartbeat": "the agent's heartbeat came after it",
    "output": "it left the input box and the agent's screen showed it took it",
    "record": "the agent's screen showed it took it (looked at again after a restart)",
}


def deferral_detail(code: ErrorCode, said: str) -> str:
    """A deferred trigger's sentence: what admission said, else the code's own."""
    return said or _CODE_DETAILS.get(code, f"deferred ({code.value})")


def ended_detail(
    result: Result,
    code: ErrorCode | None,
    backend: Backend,
    said: str,
    *,
    acked_by: str = "",
    attempts: int = 1,
) -> str:
    """The sentence an ended trigger reports: a delivery to the pane says how it was seen taken
    (whatever an earlier attempt said), anything else what was said on the way (else its code's
    sentence); a timeout tells the caller never to retry it under a new trigger_id."""
    if result is Result.DELIVERED and backend is Backend.TMUX:
        how = _ACKED_BY.get(acked_by, f"{acked_by} acknowledged it" if acked_by else "the agent took it")
        tries = f" (submitted {attempts} times)" if attempts > 1 else ""
        return f"delivered to the agent's pane: {how}{tries}"
    detail = said or (_CODE_DETAILS.get(code, "") if code is not None else "")
    if not detail:
        detail = _THROUGH.get(backend, f"the trigger ended {result.value}")
    if result is Result.TIMEOUT and RETRY_ADVICE not in detail:
        detail = f"{detail}; {RETRY_ADVICE}"
    return detail
