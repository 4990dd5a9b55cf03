"""The policies of sections 12 to 14 as plain functions over facts: which signal a trigger's
situation gives, the thread guard, the override audit fields. Pure; `now` is passed in."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from kronii.supervisor.core.model import (
    CollisionGate,
    ErrorCode,
    GuardFacts,
    OverrideIntent,
    PaneFacts,
    Result,
    RuntimeStatus,
    Situation,
)
from kronii.supervisor.core.params import SupervisorParams
from kronii.supervisor.core.table import Signal

__all__ = [
    "Assessment",
    "ThreadState",
    "TurnVerdict",
    "assess",
    "cooldown_pause",
    "cooldown_until",
    "human_busy",
    "observe_turn",
    "override_audit",
    "runtime_failure",
]


@dataclass(frozen=True, slots=True)
class Assessment:
    signal: Signal
    # For deferrals: when to look again.
    defer_until: float | None = None
    code: ErrorCode | None = None
    # Whether the collision gate was looked at, and what it decided.
    collision_gate: CollisionGate = CollisionGate.NOT_EVALUATED
    operator_busy: bool = False


def human_busy(situation: Situation, params: SupervisorParams, now: float) -> bool:
    """A person is typing in the pane: an unsent draft, or an attached client's keys within the
    quiet window."""
    pane = situation.pane
    if pane is None:
        return False
    if pane.draft.strip():
        return True
    at = pane.human_activity_at
    return at is not None and now - at < params.quiet_window_secs


def _runtime_live(situation: Situation) -> bool:
    runtime, pane = situation.runtime, situation.pane
    return (
        runtime is not None
        and runtime.managed
        and runtime.status is not RuntimeStatus.OFFLINE
        and runtime.pid_alive
        and pane is not None
        and pane.exists
        and pane.agent_state != "exited"
    )


def assess(
    situation: Situation, params: SupervisorParams, now: float, busy_since: float | None = None
) -> Assessment:
    """The signal the admission rows of TABLE match on, in order of precedence."""
    for check in _ADMISSION_CHECKS:
        found = check(situation, params, now, busy_since)
        if found is not None:
            return found
    return Assessment(Signal.RUNTIME_READY, collision_gate=CollisionGate.ENFORCED)


def _thread_blocked(
    situation: Situation, params: SupervisorParams, now: float, busy_since: float | None
) -> Assessment | None:
    if situation.guards.thread_blocked:
        return Assessment(Signal.THREAD_BLOCKED, code=ErrorCode.THREAD_AUTO_BLOCKED)
    return None


def _loop_suppressed(
    situation: Situation, params: SupervisorParams, now: float, busy_since: float | None
) -> Assessment | None:
    if situation.guards.repeats_without_progress:
        return Assessment(Signal.LOOP_SUPPRESSED, code=ErrorCode.TRIGGER_LOOP_SUPPRESSED)
    return None


def _user_holds_desktop(
    situation: Situation, params: SupervisorParams, now: float, busy_since: float | None
) -> Assessment | None:
    # Even a forced trigger waits: the person's way on is to hand the desktop back (a grant or a
    # WAIT ends the hold, so it is looked at again every recheck). No maximum defer either: the
    # fallback chain would open its windows on the desktop the person holds.
    hold = situation.desktop_hold
    if hold is None or hold.until is None or not hold.holds(now):
        return None
    return Assessment(
        Signal.USER_HOLDS_DESKTOP,
        defer_until=min(hold.until, now + params.recheck_secs),
        code=ErrorCode.USER_HOLDS_DESKTOP,
    )


def _rate_limited(
    situation: Situation, params: SupervisorParams, now: float, busy_since: float | None
) -> Assessment | None:
    window = [at for at in situation.guards.recent_attempts if now - at < params.rate_window_secs]
    if params.rate_limit and len(window) >= params.rate_limit:
        return Assessment(
            Signal.RATE_LIMITED,
            defer_until=window[len(window) - params.rate_limit] + params.rate_window_secs,
            code=ErrorCode.TRIGGER_RATE_LIMITED,
        )
    return None


def _paused(
    situation: Situation, params: SupervisorParams, now: float, busy_since: float | None
) -> Assessment | None:
    runtime = situation.runtime
    if runtime is not None and runtime.paused and not situation.force_override:
        return Assessment(Signal.PAUSED, defer_until=now + params.recheck_secs, code=ErrorCode.RUNTIME_PAUSED)
    return None


def _cooling_down(
    situation: Situation, params: SupervisorParams, now: float, busy_since: float | None
) -> Assessment | None:
    until = cooldown_until(situation.guards, params, now)
    if until is None:
        return None
    return Assessment(Signal.COOLDOWN, defer_until=until, code=ErrorCode.TRIGGER_COOLDOWN)


def _tmux_unanswered(
    situation: Situation, params: SupervisorParams, now: float, busy_since: float | None
) -> Assessment | None:
    """tmux could not be asked about the pane of a runtime the registry and its pid call live:
    the pane is not known to be gone, so wait (re-checking); past the maximum defer, fail with
    TMUX_UNAVAILABLE, never the fallback chain (it would run the agent beside its live pane)."""
    runtime, pane = situation.runtime, situation.pane
    if pane is None or not pane.unanswered or runtime is None:
        return None
    if not runtime.managed or runtime.status is RuntimeStatus.OFFLINE or not runtime.pid_alive:
        return None  # unreachable whatever tmux would say
    if busy_since is not None and now - busy_since >= params.max_defer_secs:
        return Assessment(Signal.TMUX_UNANSWERED_TOO_LONG, code=ErrorCode.TMUX_UNAVAILABLE)
    return Assessment(
        Signal.TMUX_UNANSWERED, defer_until=now + params.recheck_secs, code=ErrorCode.TMUX_UNAVAILABLE
    )


def _unreachable(
    situation: Situation, params: SupervisorParams, now: float, busy_since: float | None
) -> Assessment | None:
    if _runtime_live(situation):
        return None
    failures = [at for at in situation.guards.recent_failures if now - at < params.crash_loop_window_secs]
    if params.crash_loop_failures and len(failures) >= params.crash_loop_failures:
        return Assessment(Signal.CRASH_LOOP, code=ErrorCode.RUNTIME_OFFLINE)
    runtime = situation.runtime
    heartbeat = runtime.last_heartbeat_at if runtime is not None else None
    if heartbeat is not None and now - heartbeat > params.stale_session_secs:
        return Assessment(Signal.SESSION_STALE, code=ErrorCode.RUNTIME_OFFLINE)
    return Assessment(Signal.RUNTIME_UNAVAILABLE, code=ErrorCode.RUNTIME_OFFLINE)


def _live_pane(situation: Situation) -> PaneFacts:
    """The pane, for the checks after `_unreachable`: a live runtime has one."""
    assert situation.pane is not None
    return situation.pane


def _pane_not_agent(
    situation: Situation, params: SupervisorParams, now: float, busy_since: float | None
) -> Assessment | None:
    if not _live_pane(situation).agent_in_foreground:
        return Assessment(Signal.PANE_NOT_AGENT, code=ErrorCode.PANE_NOT_AGENT)
    return None


def _agent_screen_waits(
    situation: Situation, params: SupervisorParams, now: float, busy_since: float | None
) -> Assessment | None:
    pane = _live_pane(situation)
    # Working with its input line on screen (Codex) queues the prompt; without one (a REPL
    # running a line) the keys would go to the running program.
    busy = pane.agent_state == "working" and not pane.input_line
    return _screen_wait("busy" if busy else pane.agent_state, params, now, busy_since)


def _forced_past_keys(
    situation: Situation, params: SupervisorParams, now: float, busy_since: float | None
) -> Assessment | None:
    # A forced trigger passes a person's recent keys, never their unsent text: typing into a box
    # that holds a draft would merge the two into one message.
    if situation.force_override and not _live_pane(situation).draft.strip():
        return Assessment(
            Signal.RUNTIME_READY,
            collision_gate=CollisionGate.BYPASSED,
            operator_busy=human_busy(situation, params, now),
        )
    return None


def _person_typing(
    situation: Situation, params: SupervisorParams, now: float, busy_since: float | None
) -> Assessment | None:
    if not human_busy(situation, params, now):
        return None
    if busy_since is not None and now - busy_since >= params.max_defer_secs:
        return Assessment(
            Signal.COLLISION_MAX_DEFER,
            code=ErrorCode.COLLISION_MAX_DEFER,
            collision_gate=CollisionGate.ENFORCED,
            operator_busy=True,
        )
    return Assessment(
        Signal.OPERATOR_BUSY,
        defer_until=now + params.recheck_secs,
        code=ErrorCode.OPERATOR_BUSY,
        collision_gate=CollisionGate.ENFORCED,
        operator_busy=True,
    )


_AdmissionCheck = Callable[[Situation, SupervisorParams, float, float | None], Assessment | None]
# The order is the precedence docs/architecture.md gives (step 2, "Assess"); the first that speaks decides.
_ADMISSION_CHECKS: tuple[_AdmissionCheck, ...] = (
    _thread_blocked,
    _loop_suppressed,
    _user_holds_desktop,
    _rate_limited,
    _paused,
    _cooling_down,
    _tmux_unanswered,
    _unreachable,
    _pane_not_agent,
    _agent_screen_waits,
    _forced_past_keys,
    _person_typing,
)


_SCREEN_WAITS = {
    "blocked": (Signal.AGENT_BLOCKED, Signal.BLOCKED_TOO_LONG, ErrorCode.AGENT_BLOCKED),
    "starting": (Signal.AGENT_STARTING, Signal.STARTING_TOO_LONG, ErrorCode.AGENT_STARTING),
    "busy": (Signal.AGENT_BUSY, Signal.BUSY_TOO_LONG, ErrorCode.AGENT_BUSY),
}


def _screen_wait(
    agent_state: str, params: SupervisorParams, now: float, waiting_since: float | None
) -> Assessment | None:
    """A dialog on the agent's screen, no input box yet, or none while it runs a line: wait
    (re-checking), never type; past the maximum defer, the fallback chain. Even a forced trigger
    waits: typing into a dialog would answer it, into a running program would feed it."""
    if agent_state not in _SCREEN_WAITS:
        return None
    wait, too_long, code = _SCREEN_WAITS[agent_state]
    if waiting_since is not None and now - waiting_since >= params.max_defer_secs:
        return Assessment(too_long, code=code)
    return Assessment(wait, defer_until=now + params.recheck_secs, code=code)


# ---- section 14: the cooldown after the agent's runtime failed ----------------------------------

# The outcomes that count against the agent's runtime: kronii typed into it or launched it, and that
# failed. Nothing else does: a person typing (OPERATOR_BUSY, COLLISION_MAX_DEFER), a dialog or a busy
# or starting screen (nothing was typed), tmux not answering, a refusal of the thread guard, a pane
# with a shell in front or a runtime already gone (nothing was typed; the fallback chain's own
# failures count when it runs), and never a deferral or a delivery.
_RUNTIME_FAILURES: Mapping[ErrorCode, str] = MappingProxyType(
    {
        ErrorCode.WRITE_FAILED: "writing the prompt to its pane failed",
        ErrorCode.TYPED_NOT_SUBMITTED: "the prompt stayed in its input box",
        ErrorCode.ACK_TIMEOUT: "the prompt was typed but the agent showed no sign of taking it",
        ErrorCode.RESUME_FAILED: "resuming its session failed",
        ErrorCode.FALLBACK_EXHAUSTED: "resuming its session failed",
        ErrorCode.SPAWN_FAILED: "a fresh session of it did not start",
    }
)


def runtime_failure(result: Result, code: ErrorCode | None) -> str:
    """Why an ended trigger counts as a failure of the agent's runtime (a phrase for the cooldown's
    detail), or "" when it does not count: only real failures feed the cooldown and the crash loop."""
    if result in (Result.DELIVERED, Result.DEFERRED, Result.ALREADY_ACTIVE) or code is None:
        return ""
    return _RUNTIME_FAILURES.get(code, "")


def cooldown_pause(streak: int, params: SupervisorParams) -> float:
    """How long nothing is typed to an agent after `streak` real failures in a row: none below
    `cooldown_failures`, then `cooldown_secs`, doubling with each further failure, at most
    `cooldown_max_secs` (or `cooldown_secs` when that is longer)."""
    if params.cooldown_failures <= 0 or streak < params.cooldown_failures or params.cooldown_secs <= 0:
        return 0.0
    doublings = min(streak - params.cooldown_failures, 16)
    pause: float = params.cooldown_secs * 2.0**doublings
    return min(pause, max(params.cooldown_max_secs, params.cooldown_secs))


def cooldown_until(guards: GuardFacts, params: SupervisorParams, now: float) -> float | None:
    """When the agent's cooldown ends, or None when it is not cooling down. A last failure stamped
    ahead of `now` (a monotonic clock that started again, after a reboot) holds nothing."""
    last = guards.last_failure_at
    pause = cooldown_pause(guards.consecutive_failures, params)
    if last is None or pause <= 0 or not 0 <= now - last < pause:
        return None
    return last + pause


# ---- section 14: the thread guard ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ThreadState:
    """What the guard remembers of one thread and agent between triggers."""

    no_progress_turns: int = 0
    last_marker: str = ""
    finding_key: str = ""
    finding_repeats: int = 0
    last_prompt_hash: str = ""
    last_progress_epoch: int = -1
    blocked: bool = False
    blocked_reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "no_progress_turns": self.no_progress_turns,
            "last_marker": self.last_marker,
            "finding_key": self.finding_key,
            "finding_repeats": self.finding_repeats,
            "last_prompt_hash": self.last_prompt_hash,
            "last_progress_epoch": self.last_progress_epoch,
            "blocked": self.blocked,
            "blocked_reason": self.blocked_reason,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ThreadState:
        return cls(**{k: data[k] for k in cls.__slots__ if k in data})


@dataclass(frozen=True, slots=True)
class TurnVerdict:
    state: ThreadState
    blocked: bool
    loop: bool


def observe_turn(
    state: ThreadState,
    *,
    prompt_hash: str,
    progress_marker: str,
    finding_key: str,
    progress_epoch: int,
    params: SupervisorParams,
) -> TurnVerdict:
    """One trigger on a thread is one turn.

    - No progress: the caller's progress marker (e.g. the thread's read cursor) is the same as on
      the previous turn; `no_progress_turns` turns in a row block the thread. An empty marker says
      nothing and resets nothing.
    - Repeated finding: the same unresolved finding key `repeated_finding_cycles` times in a row
      blocks the thread.
    - Loop: the same prompt again while the runtime made no progress (no ack, no heartbeat) since
      the previous one is suppressed, without blocking the thread.
    """
    if state.blocked:
        return TurnVerdict(state, blocked=True, loop=False)
    turns = state.no_progress_turns
    if progress_marker:
        turns = turns + 1 if progress_marker == state.last_marker else 0
    repeats = 0
    if finding_key:
        repeats = state.finding_repeats + 1 if finding_key == state.finding_key else 1
    loop = bool(state.last_prompt_hash) and (
        prompt_hash == state.last_prompt_hash and progress_epoch == state.last_progress_epoch
    )
    reason = ""
    if params.no_progress_turns and turns >= params.no_progress_turns:
        reason = f"{turns} turns without progress"
    elif params.repeated_finding_cycles and repeats >= params.repeated_finding_cycles:
        reason = f"finding {finding_key!r} unresolved {repeats} times"
    new = replace(
        state,
        no_progress_turns=turns,
        last_marker=progress_marker or state.last_marker,
        finding_key=finding_key,
        finding_repeats=repeats,
        last_prompt_hash=prompt_hash,
        last_progress_epoch=progress_epoch,
        blocked=bool(reason),
        blocked_reason=reason,
    )
    return TurnVerdict(new, blocked=bool(reason), loop=loop and not reason)


# ---- section 13.2: override audit ------------------------------------------------------------------


def override_audit(
    *, requested: bool, reason: str, gate: CollisionGate, applied: bool | None = None
) -> dict[str, Any]:
    """The audit fields a force-override attempt persists in the attempt's details.

    The intent comes from the reason's prefix (`human_override:` or `coordinator_override:`);
    a request without either prefix is treated as a human's, the more conservative reading.
    """
    intent = (
        OverrideIntent.COORDINATOR
        if reason.startswith(OverrideIntent.COORDINATOR.value + ":")
        else OverrideIntent.HUMAN
    )
    return {
        "force_override_requested": requested,
        "force_override_applied": bool(requested if applied is None else applied)
        and gate is CollisionGate.BYPASSED,
        "override_intent": intent.value if requested else "",
        "override_reason_prefix": f"{intent.value}:" if requested else "",
        "collision_gate": gate.value,
    }
