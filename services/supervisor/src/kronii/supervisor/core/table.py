"""The trigger lifecycle of seed 002 (sections 9, 12, 13.2 and 14) as data. `TriggerMachine`
interprets it; nothing else encodes these transitions. First matching row wins."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from kronii.supervisor.core.model import Backend, ErrorCode, Result


class Phase(enum.StrEnum):
    RECEIVED = "received"
    DEFERRED = "deferred"
    DELIVERING = "delivering"
    AWAITING_ACK = "awaiting_ack"
    RESUMING = "resuming"
    SPAWNING = "spawning"
    DONE = "done"


class Signal(enum.StrEnum):
    # Admission: what the policies made of the runtime, the pane and the guardrails.
    RUNTIME_READY = "runtime_ready"
    RUNTIME_UNAVAILABLE = "runtime_unavailable"
    SESSION_STALE = "session_stale"
    CRASH_LOOP = "crash_loop"
    PANE_NOT_AGENT = "pane_not_agent"
    OPERATOR_BUSY = "operator_busy"
    COLLISION_MAX_DEFER = "collision_max_defer"
    RATE_LIMITED = "rate_limited"
    COOLDOWN = "cooldown"
    PAUSED = "paused"
    THREAD_BLOCKED = "thread_blocked"
    LOOP_SUPPRESSED = "loop_suppressed"
    # The person took the desktop back (the input broker's user_holds_until is ahead).
    USER_HOLDS_DESKTOP = "user_holds_desktop"
    # The agent's screen: a dialog waits for a person, or the agent has not drawn its box yet.
    AGENT_BLOCKED = "agent_blocked"
    BLOCKED_TOO_LONG = "blocked_too_long"
    AGENT_STARTING = "agent_starting"
    STARTING_TOO_LONG = "starting_too_long"
    # The agent is working with no input line on screen (a REPL running a line): typing now would
    # feed the running program.
    AGENT_BUSY = "agent_busy"
    BUSY_TOO_LONG = "busy_too_long"
    # tmux could not be asked about the pane (not "the pane is gone"): wait for it, never fall back
    # (a resume or a spawn beside a live pane would run the agent twice).
    TMUX_UNANSWERED = "tmux_unanswered"
    TMUX_UNANSWERED_TOO_LONG = "tmux_unanswered_too_long"
    # Delivery through the pane.
    WRITTEN = "written"
    WRITE_FAILED = "write_failed"
    ACKED = "acked"
    TYPED_NOT_SUBMITTED = "typed_not_submitted"
    ACK_TIMEOUT = "ack_timeout"
    # At the deadline the prompt still sits in the input box.
    STUCK_IN_BOX = "stuck_in_box"
    # The typed text showed nowhere or outside the agent's input area: taken back, not submitted.
    TAKEN_BACK = "taken_back"
    # A person's keys reached the pane while the prompt was being typed: taken back, wait for them.
    PERSON_KEYS_WHILE_TYPING = "person_keys_while_typing"
    # The supervisor restarted after the prompt's bytes were written: look, never type again.
    RESTARTED_AFTER_WRITE = "restarted_after_write"
    # The fallback chain of section 9.2.
    RESUME_OK = "resume_ok"
    RESUME_FAILED = "resume_failed"
    SPAWN_OK = "spawn_ok"
    SPAWN_FAILED = "spawn_failed"


class Guard(enum.StrEnum):
    NONE = "none"
    CAN_RESUME = "can_resume"
    CAN_SPAWN = "can_spawn"
    RETRIES_LEFT = "retries_left"
    NOT_RESUBMITTED = "not_resubmitted"
    RESUME_ATTEMPTS_LEFT = "resume_attempts_left"
    RECOVERED = "recovered"


class Action(enum.StrEnum):
    DELIVER = "deliver"
    WAIT_ACK = "wait_ack"
    RESUBMIT = "resubmit"
    DEFER = "defer"
    MARK_OPERATOR_BUSY = "mark_operator_busy"
    NOTE_WAIT = "note_wait"
    MARK_RECOVERED = "mark_recovered"
    EMIT_COLLISION = "emit_collision"
    LAUNCH_RESUME = "launch_resume"
    LAUNCH_SPAWN = "launch_spawn"
    MARK_TIMED_OUT = "mark_timed_out"
    FINISH = "finish"


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    phases: frozenset[Phase]
    signal: Signal
    guard: Guard
    to: Phase
    actions: tuple[Action, ...]
    # For FINISH: the result (None: delivered, or timeout when the ack timed out first), the
    # backend that carried the prompt, and the error code (None: the signal's own).
    result: Result | None = None
    backend: Backend = Backend.NONE
    code: ErrorCode | None = None


_P = Phase
_ADMIT = frozenset({_P.RECEIVED, _P.DEFERRED})
_A = Action


def _admission_fallback(name: str, signal: Signal, code: ErrorCode, *extra: Action) -> tuple[Row, ...]:
    """A live-process trigger that cannot happen: resume, else spawn, else fail (section 9.2)."""
    return (
        Row(f"{name}_falls_back_to_resume", _ADMIT, signal, Guard.CAN_RESUME, _P.RESUMING,
            (*extra, _A.LAUNCH_RESUME)),
        Row(f"{name}_spawns_without_resume", _ADMIT, signal, Guard.CAN_SPAWN, _P.SPAWNING,
            (*extra, _A.LAUNCH_SPAWN)),
        Row(f"{name}_fails_without_fallback", _ADMIT, signal, Guard.NONE, _P.DONE,
            (*extra, _A.FINISH), result=Result.FAILED, code=code),
    )  # fmt: skip


TABLE: tuple[Row, ...] = (
    # -- section 14: guardrails come before anything touches the pane --
    Row("thread_blocked_fails_thread_auto_blocked", _ADMIT, Signal.THREAD_BLOCKED, Guard.NONE,
        _P.DONE, (_A.FINISH,), result=Result.FAILED, code=ErrorCode.THREAD_AUTO_BLOCKED),
    Row("repeat_without_progress_fails_loop_suppressed", _ADMIT, Signal.LOOP_SUPPRESSED, Guard.NONE,
        _P.DONE, (_A.FINISH,), result=Result.FAILED, code=ErrorCode.TRIGGER_LOOP_SUPPRESSED),
    # -- the person took the desktop back: nothing touches it, not even a resume or a spawn (their
    #    windows open on the same desktop), until the hold ends --
    Row("user_holds_desktop_defers", _ADMIT, Signal.USER_HOLDS_DESKTOP, Guard.NONE, _P.DEFERRED,
        (_A.DEFER,)),
    Row("rate_limited_defers_trigger_rate_limited", _ADMIT, Signal.RATE_LIMITED, Guard.NONE,
        _P.DEFERRED, (_A.DEFER,)),
    Row("paused_runtime_defers", _ADMIT, Signal.PAUSED, Guard.NONE, _P.DEFERRED, (_A.DEFER,)),
    Row("cooldown_after_failures_defers", _ADMIT, Signal.COOLDOWN, Guard.NONE, _P.DEFERRED,
        (_A.DEFER,)),
    # -- section 12: crash loop and stale sessions spawn directly --
    Row("crash_loop_spawns_directly", _ADMIT, Signal.CRASH_LOOP, Guard.CAN_SPAWN, _P.SPAWNING,
        (_A.LAUNCH_SPAWN,)),
    Row("crash_loop_without_spawn_falls_back_to_resume", _ADMIT, Signal.CRASH_LOOP, Guard.CAN_RESUME,
        _P.RESUMING, (_A.LAUNCH_RESUME,)),
    Row("crash_loop_without_fallback_fails", _ADMIT, Signal.CRASH_LOOP, Guard.NONE, _P.DONE,
        (_A.FINISH,), result=Result.FAILED, code=ErrorCode.RUNTIME_OFFLINE),
    Row("stale_session_spawns_directly", _ADMIT, Signal.SESSION_STALE, Guard.CAN_SPAWN, _P.SPAWNING,
        (_A.LAUNCH_SPAWN,)),
    Row("stale_session_without_spawn_falls_back_to_resume", _ADMIT, Signal.SESSION_STALE,
        Guard.CAN_RESUME, _P.RESUMING, (_A.LAUNCH_RESUME,)),
    Row("stale_session_without_fallback_fails", _ADMIT, Signal.SESSION_STALE, Guard.NONE, _P.DONE,
        (_A.FINISH,), result=Result.FAILED, code=ErrorCode.RUNTIME_OFFLINE),
    # -- tmux could not be asked about a live runtime's pane: unknown is not gone --
    Row("tmux_unanswered_defers_tmux_unavailable", _ADMIT, Signal.TMUX_UNANSWERED, Guard.NONE,
        _P.DEFERRED, (_A.NOTE_WAIT, _A.DEFER)),
    Row("tmux_unanswered_past_max_defer_fails", _ADMIT, Signal.TMUX_UNANSWERED_TOO_LONG, Guard.NONE,
        _P.DONE, (_A.FINISH,), result=Result.FAILED, code=ErrorCode.TMUX_UNAVAILABLE),
    # -- section 9.2: runtime missing, offline or unmanaged: skip the process trigger --
    *_admission_fallback("runtime_unavailable", Signal.RUNTIME_UNAVAILABLE, ErrorCode.RUNTIME_OFFLINE),
    # -- never type into a shell: the live process is not reachable --
    *_admission_fallback("pane_not_agent", Signal.PANE_NOT_AGENT, ErrorCode.PANE_NOT_AGENT),
    # -- section 13.2: a person is typing --
    Row("operator_busy_defers_and_marks_runtime", _ADMIT, Signal.OPERATOR_BUSY, Guard.NONE,
        _P.DEFERRED, (_A.MARK_OPERATOR_BUSY, _A.DEFER)),
    *_admission_fallback(
        "collision_past_max_defer", Signal.COLLISION_MAX_DEFER, ErrorCode.COLLISION_MAX_DEFER,
        _A.EMIT_COLLISION,
    ),
    # -- the agent's own screen: never type into a dialog, never answer one --
    Row("agent_blocked_defers_agent_blocked", _ADMIT, Signal.AGENT_BLOCKED, Guard.NONE, _P.DEFERRED,
        (_A.NOTE_WAIT, _A.DEFER)),
    *_admission_fallback("agent_blocked_past_max_defer", Signal.BLOCKED_TOO_LONG, ErrorCode.AGENT_BLOCKED),
    Row("agent_starting_defers_agent_starting", _ADMIT, Signal.AGENT_STARTING, Guard.NONE, _P.DEFERRED,
        (_A.NOTE_WAIT, _A.DEFER)),
    *_admission_fallback("agent_starting_past_max_defer", Signal.STARTING_TOO_LONG, ErrorCode.AGENT_STARTING),
    Row("agent_busy_defers_agent_busy", _ADMIT, Signal.AGENT_BUSY, Guard.NONE, _P.DEFERRED,
        (_A.NOTE_WAIT, _A.DEFER)),
    *_admission_fallback("agent_busy_past_max_defer", Signal.BUSY_TOO_LONG, ErrorCode.AGENT_BUSY),
    # -- section 9.1: the happy path --
    Row("runtime_ready_delivers_to_pane", _ADMIT, Signal.RUNTIME_READY, Guard.NONE, _P.DELIVERING,
        (_A.DELIVER,)),
    Row("written_awaits_ack", frozenset({_P.DELIVERING}), Signal.WRITTEN, Guard.NONE,
        _P.AWAITING_ACK, (_A.WAIT_ACK,)),
    # A failure during the write is indeterminate: never write again, go to the fallback chain.
    Row("write_failed_falls_back_to_resume", frozenset({_P.DELIVERING}), Signal.WRITE_FAILED,
        Guard.CAN_RESUME, _P.RESUMING, (_A.LAUNCH_RESUME,)),
    Row("write_failed_fails_without_resume", frozenset({_P.DELIVERING}), Signal.WRITE_FAILED,
        Guard.NONE, _P.DONE, (_A.FINISH,), result=Result.FAILED, code=ErrorCode.WRITE_FAILED),
    # The text did not land in the empty input area it was typed for: it was taken back key for
    # key and nothing was submitted; typing it again could land it in the same wrong place.
    Row("text_landed_elsewhere_is_taken_back_and_fails", frozenset({_P.DELIVERING}), Signal.TAKEN_BACK,
        Guard.NONE, _P.DONE, (_A.FINISH,), result=Result.FAILED, code=ErrorCode.TYPED_NOT_SUBMITTED),
    # A person started typing while the prompt went in: it was taken back; wait for them.
    Row("person_keys_while_typing_take_it_back_and_defer", frozenset({_P.DELIVERING}),
        Signal.PERSON_KEYS_WHILE_TYPING, Guard.NONE, _P.DEFERRED, (_A.MARK_OPERATOR_BUSY, _A.DEFER)),
    Row("ack_delivers", frozenset({_P.AWAITING_ACK}), Signal.ACKED, Guard.NONE, _P.DONE,
        (_A.FINISH,), result=Result.DELIVERED, backend=Backend.TMUX),
    # The prompt sits in the input box: send the submit key once more, never paste twice.
    Row("typed_not_submitted_resubmits_once", frozenset({_P.AWAITING_ACK}),
        Signal.TYPED_NOT_SUBMITTED, Guard.NOT_RESUBMITTED, _P.AWAITING_ACK, (_A.RESUBMIT,)),
    Row("typed_not_submitted_again_keeps_waiting", frozenset({_P.AWAITING_ACK}),
        Signal.TYPED_NOT_SUBMITTED, Guard.NONE, _P.AWAITING_ACK, ()),
    # Still in the box after the one extra submit: say so; a fallback would send it twice.
    Row("prompt_stuck_in_box_finishes_typed_not_submitted", frozenset({_P.AWAITING_ACK}),
        Signal.STUCK_IN_BOX, Guard.NONE, _P.DONE, (_A.FINISH,), result=Result.TYPED_NOT_SUBMITTED,
        code=ErrorCode.TYPED_NOT_SUBMITTED),
    # After a restart the record says the bytes were written: only look, from the record.
    Row("restart_after_write_looks_again", frozenset({_P.DELIVERING, _P.AWAITING_ACK}),
        Signal.RESTARTED_AFTER_WRITE, Guard.NONE, _P.AWAITING_ACK, (_A.MARK_RECOVERED, _A.WAIT_ACK)),
    Row("recovered_ack_timeout_times_out", frozenset({_P.AWAITING_ACK}), Signal.ACK_TIMEOUT,
        Guard.RECOVERED, _P.DONE, (_A.MARK_TIMED_OUT, _A.FINISH), result=Result.TIMEOUT,
        code=ErrorCode.ACK_TIMEOUT),
    # Section 12: ack timeout 8 s, 2 retries (a retry presses submit again only if the prompt is
    # still in the box; it never types the prompt twice), then resume.
    Row("ack_timeout_retries", frozenset({_P.AWAITING_ACK}), Signal.ACK_TIMEOUT, Guard.RETRIES_LEFT,
        _P.DELIVERING, (_A.DELIVER,)),
    Row("ack_timeout_exhausted_falls_back_to_resume", frozenset({_P.AWAITING_ACK}),
        Signal.ACK_TIMEOUT, Guard.CAN_RESUME, _P.RESUMING, (_A.MARK_TIMED_OUT, _A.LAUNCH_RESUME)),
    Row("ack_timeout_exhausted_spawns_without_resume", frozenset({_P.AWAITING_ACK}),
        Signal.ACK_TIMEOUT, Guard.CAN_SPAWN, _P.SPAWNING, (_A.MARK_TIMED_OUT, _A.LAUNCH_SPAWN)),
    Row("ack_timeout_exhausted_times_out", frozenset({_P.AWAITING_ACK}), Signal.ACK_TIMEOUT,
        Guard.NONE, _P.DONE, (_A.MARK_TIMED_OUT, _A.FINISH), result=Result.TIMEOUT,
        code=ErrorCode.ACK_TIMEOUT),
    # -- section 9.2: resume up to 2 attempts, then spawn; launches do not block --
    Row("resume_launched_finishes", frozenset({_P.RESUMING}), Signal.RESUME_OK, Guard.NONE, _P.DONE,
        (_A.FINISH,), backend=Backend.RESUME),
    Row("resume_failed_tries_again", frozenset({_P.RESUMING}), Signal.RESUME_FAILED,
        Guard.RESUME_ATTEMPTS_LEFT, _P.RESUMING, (_A.LAUNCH_RESUME,)),
    Row("resume_failed_twice_spawns", frozenset({_P.RESUMING}), Signal.RESUME_FAILED, Guard.CAN_SPAWN,
        _P.SPAWNING, (_A.LAUNCH_SPAWN,)),
    Row("resume_failed_twice_fails", frozenset({_P.RESUMING}), Signal.RESUME_FAILED, Guard.NONE,
        _P.DONE, (_A.FINISH,), result=Result.FAILED, code=ErrorCode.FALLBACK_EXHAUSTED),
    Row("spawn_launched_finishes", frozenset({_P.SPAWNING}), Signal.SPAWN_OK, Guard.NONE, _P.DONE,
        (_A.FINISH,), backend=Backend.SPAWN),
    Row("spawn_failed_fails", frozenset({_P.SPAWNING}), Signal.SPAWN_FAILED, Guard.NONE, _P.DONE,
        (_A.FINISH,), result=Result.FAILED, code=ErrorCode.SPAWN_FAILED),
)  # fmt: skip

ROW_NAMES = frozenset(row.name for row in TABLE)
assert len(ROW_NAMES) == len(TABLE), "row names are unique"
