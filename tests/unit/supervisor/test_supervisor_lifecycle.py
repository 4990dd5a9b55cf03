"""Seed 002's trigger lifecycle (sections 9, 12, 13.2, 14): one test per TABLE row, named after it.
The clock is a number passed in; nothing sleeps."""

from __future__ import annotations

import sys

import pytest
from kronii.supervisor.core.machine import (
    Defer,
    Deliver,
    EmitCollision,
    Finish,
    LaunchResume,
    LaunchSpawn,
    MarkOperatorBusy,
    Resubmit,
    TriggerMachine,
    UnexpectedSignal,
    WaitAck,
    _final_code,
)
from kronii.supervisor.core.model import Backend, ErrorCode, Result
from kronii.supervisor.core.params import SupervisorParams
from kronii.supervisor.core.table import ROW_NAMES, Action, Guard, Phase, Row, Signal

PARAMS = SupervisorParams()
T0 = 1_000_000.0


def machine(*, can_resume: bool = True, can_spawn: bool = True) -> TriggerMachine:
    return TriggerMachine(PARAMS, can_resume=can_resume, can_spawn=can_spawn)


def fired(m: TriggerMachine, row: str) -> None:
    assert m.row_fire_counts.get(row) == 1, dict(m.row_fire_counts)


def awaiting_ack(m: TriggerMachine) -> TriggerMachine:
    m.handle(Signal.RUNTIME_READY, T0)
    m.handle(Signal.WRITTEN, T0 + 0.01)
    assert m.phase is Phase.AWAITING_ACK
    return m


def resuming(m: TriggerMachine) -> TriggerMachine:
    m.handle(Signal.RUNTIME_UNAVAILABLE, T0, code=ErrorCode.RUNTIME_OFFLINE)
    assert m.phase is Phase.RESUMING
    return m


# ---- section 14: guardrails --------------------------------------------------------------------------


def test_row_thread_blocked_fails_thread_auto_blocked() -> None:
    m = machine()
    effects = m.handle(Signal.THREAD_BLOCKED, T0)
    assert effects == [Finish(Result.FAILED, Backend.NONE, ErrorCode.THREAD_AUTO_BLOCKED, "")]
    assert m.done
    fired(m, "thread_blocked_fails_thread_auto_blocked")


def test_row_repeat_without_progress_fails_loop_suppressed() -> None:
    m = machine()
    effects = m.handle(Signal.LOOP_SUPPRESSED, T0)
    assert effects == [Finish(Result.FAILED, Backend.NONE, ErrorCode.TRIGGER_LOOP_SUPPRESSED, "")]
    fired(m, "repeat_without_progress_fails_loop_suppressed")


def test_row_rate_limited_defers_trigger_rate_limited() -> None:
    m = machine()
    effects = m.handle(Signal.RATE_LIMITED, T0, defer_until=T0 + 42, code=ErrorCode.TRIGGER_RATE_LIMITED)
    assert effects == [Defer(T0 + 42, ErrorCode.TRIGGER_RATE_LIMITED)]
    assert m.phase is Phase.DEFERRED and m.deferred_until == T0 + 42
    fired(m, "rate_limited_defers_trigger_rate_limited")


def test_row_paused_runtime_defers() -> None:
    m = machine()
    effects = m.handle(Signal.PAUSED, T0, defer_until=T0 + 5, code=ErrorCode.RUNTIME_PAUSED)
    assert effects == [Defer(T0 + 5, ErrorCode.RUNTIME_PAUSED)]
    fired(m, "paused_runtime_defers")


def test_row_cooldown_after_failures_defers() -> None:
    m = machine()
    effects = m.handle(Signal.COOLDOWN, T0, defer_until=T0 + 30, code=ErrorCode.TRIGGER_COOLDOWN)
    assert effects == [Defer(T0 + 30, ErrorCode.TRIGGER_COOLDOWN)]
    fired(m, "cooldown_after_failures_defers")


def test_row_user_holds_desktop_defers() -> None:
    m = machine()
    effects = m.handle(Signal.USER_HOLDS_DESKTOP, T0, defer_until=T0 + 5, code=ErrorCode.USER_HOLDS_DESKTOP)
    assert effects == [Defer(T0 + 5, ErrorCode.USER_HOLDS_DESKTOP)]
    assert m.phase is Phase.DEFERRED and m.deferred_until == T0 + 5
    # Deferred again and again while the hold lasts: no maximum defer sends it down the fallback chain.
    again = m.handle(
        Signal.USER_HOLDS_DESKTOP, T0 + 600, defer_until=T0 + 605, code=ErrorCode.USER_HOLDS_DESKTOP
    )
    assert again == [Defer(T0 + 605, ErrorCode.USER_HOLDS_DESKTOP)] and m.resume_attempts == 0
    assert m.row_fire_counts["user_holds_desktop_defers"] == 2


# ---- section 12: crash loop and stale sessions -------------------------------------------------------


def test_row_crash_loop_spawns_directly() -> None:
    m = machine()
    effects = m.handle(Signal.CRASH_LOOP, T0, code=ErrorCode.RUNTIME_OFFLINE)
    assert effects == [LaunchSpawn("crash_loop_spawns_directly")]
    assert m.resume_attempts == 0
    fired(m, "crash_loop_spawns_directly")


def test_row_crash_loop_without_spawn_falls_back_to_resume() -> None:
    m = machine(can_spawn=False)
    assert m.handle(Signal.CRASH_LOOP, T0) == [LaunchResume(1)]
    fired(m, "crash_loop_without_spawn_falls_back_to_resume")


def test_row_crash_loop_without_fallback_fails() -> None:
    m = machine(can_resume=False, can_spawn=False)
    assert m.handle(Signal.CRASH_LOOP, T0) == [
        Finish(Result.FAILED, Backend.NONE, ErrorCode.RUNTIME_OFFLINE, "")
    ]
    fired(m, "crash_loop_without_fallback_fails")


def test_row_stale_session_spawns_directly() -> None:
    m = machine()
    assert m.handle(Signal.SESSION_STALE, T0) == [LaunchSpawn("stale_session_spawns_directly")]
    fired(m, "stale_session_spawns_directly")


def test_row_stale_session_without_spawn_falls_back_to_resume() -> None:
    m = machine(can_spawn=False)
    assert m.handle(Signal.SESSION_STALE, T0) == [LaunchResume(1)]
    fired(m, "stale_session_without_spawn_falls_back_to_resume")


def test_row_stale_session_without_fallback_fails() -> None:
    m = machine(can_resume=False, can_spawn=False)
    (finish,) = m.handle(Signal.SESSION_STALE, T0)
    assert finish == Finish(Result.FAILED, Backend.NONE, ErrorCode.RUNTIME_OFFLINE, "")
    fired(m, "stale_session_without_fallback_fails")


# ---- section 9.2: runtime missing, offline or unmanaged ----------------------------------------------


def test_row_runtime_unavailable_falls_back_to_resume() -> None:
    m = machine()
    assert m.handle(Signal.RUNTIME_UNAVAILABLE, T0, code=ErrorCode.RUNTIME_OFFLINE) == [LaunchResume(1)]
    assert m.deliveries == 0, "an unreachable runtime is never written to"
    fired(m, "runtime_unavailable_falls_back_to_resume")


def test_row_runtime_unavailable_spawns_without_resume() -> None:
    m = machine(can_resume=False)
    assert m.handle(Signal.RUNTIME_UNAVAILABLE, T0) == [
        LaunchSpawn("runtime_unavailable_spawns_without_resume")
    ]
    fired(m, "runtime_unavailable_spawns_without_resume")


def test_row_runtime_unavailable_fails_without_fallback() -> None:
    m = machine(can_resume=False, can_spawn=False)
    effects = m.handle(Signal.RUNTIME_UNAVAILABLE, T0)
    assert effects == [Finish(Result.FAILED, Backend.NONE, ErrorCode.RUNTIME_OFFLINE, "")]
    fired(m, "runtime_unavailable_fails_without_fallback")


# ---- a prompt is never typed into a shell --------------------------------------------------------------


def test_row_pane_not_agent_falls_back_to_resume() -> None:
    m = machine()
    assert m.handle(Signal.PANE_NOT_AGENT, T0, code=ErrorCode.PANE_NOT_AGENT) == [LaunchResume(1)]
    assert m.deliveries == 0
    fired(m, "pane_not_agent_falls_back_to_resume")


def test_row_pane_not_agent_spawns_without_resume() -> None:
    m = machine(can_resume=False)
    assert m.handle(Signal.PANE_NOT_AGENT, T0) == [LaunchSpawn("pane_not_agent_spawns_without_resume")]
    fired(m, "pane_not_agent_spawns_without_resume")


def test_row_pane_not_agent_fails_without_fallback() -> None:
    m = machine(can_resume=False, can_spawn=False)
    effects = m.handle(Signal.PANE_NOT_AGENT, T0)
    assert effects == [Finish(Result.FAILED, Backend.NONE, ErrorCode.PANE_NOT_AGENT, "")]
    assert m.deliveries == 0
    fired(m, "pane_not_agent_fails_without_fallback")


# ---- section 13.2: collision ---------------------------------------------------------------------------


def test_row_operator_busy_defers_and_marks_runtime() -> None:
    m = machine()
    effects = m.handle(Signal.OPERATOR_BUSY, T0, defer_until=T0 + 5, code=ErrorCode.OPERATOR_BUSY)
    assert effects == [MarkOperatorBusy(), Defer(T0 + 5, ErrorCode.OPERATOR_BUSY)]
    # Re-checks keep the first time the person was seen: the max-defer window counts from it.
    m.handle(Signal.OPERATOR_BUSY, T0 + 5, defer_until=T0 + 10, code=ErrorCode.OPERATOR_BUSY)
    assert m.busy_since == T0 and m.phase is Phase.DEFERRED
    assert m.row_fire_counts["operator_busy_defers_and_marks_runtime"] == 2


def test_deferred_trigger_is_delivered_once_the_operator_goes_quiet() -> None:
    m = machine()
    m.handle(Signal.OPERATOR_BUSY, T0, defer_until=T0 + 5, code=ErrorCode.OPERATOR_BUSY)
    assert m.handle(Signal.RUNTIME_READY, T0 + 25) == [Deliver(1)]
    assert m.deferred_until is None


def test_row_collision_past_max_defer_falls_back_to_resume() -> None:
    m = machine()
    m.handle(Signal.OPERATOR_BUSY, T0, code=ErrorCode.OPERATOR_BUSY)
    effects = m.handle(Signal.COLLISION_MAX_DEFER, T0 + 60, code=ErrorCode.COLLISION_MAX_DEFER)
    assert effects == [EmitCollision(T0), LaunchResume(1)]
    (finish,) = m.handle(Signal.RESUME_OK, T0 + 61)
    assert finish == Finish(Result.DELIVERED, Backend.RESUME, ErrorCode.COLLISION_MAX_DEFER, "resume")
    fired(m, "collision_past_max_defer_falls_back_to_resume")


def test_row_collision_past_max_defer_spawns_without_resume() -> None:
    m = machine(can_resume=False)
    effects = m.handle(Signal.COLLISION_MAX_DEFER, T0 + 60)
    assert effects == [EmitCollision(None), LaunchSpawn("collision_past_max_defer_spawns_without_resume")]
    fired(m, "collision_past_max_defer_spawns_without_resume")


def test_row_collision_past_max_defer_fails_without_fallback() -> None:
    m = machine(can_resume=False, can_spawn=False)
    effects = m.handle(Signal.COLLISION_MAX_DEFER, T0 + 60)
    assert effects == [
        EmitCollision(None),
        Finish(Result.FAILED, Backend.NONE, ErrorCode.COLLISION_MAX_DEFER, ""),
    ]
    fired(m, "collision_past_max_defer_fails_without_fallback")


# ---- section 9.1: the happy path -----------------------------------------------------------------------


def test_row_runtime_ready_delivers_to_pane() -> None:
    m = machine()
    assert m.handle(Signal.RUNTIME_READY, T0) == [Deliver(1)]
    fired(m, "runtime_ready_delivers_to_pane")


def test_row_written_awaits_ack() -> None:
    m = machine()
    m.handle(Signal.RUNTIME_READY, T0)
    assert m.handle(Signal.WRITTEN, T0 + 0.01) == [WaitAck(T0 + 0.01 + PARAMS.ack_timeout_secs)]
    fired(m, "written_awaits_ack")


def test_row_write_failed_falls_back_to_resume() -> None:
    m = machine()
    m.handle(Signal.RUNTIME_READY, T0)
    assert m.handle(Signal.WRITE_FAILED, T0) == [LaunchResume(1)]
    assert m.deliveries == 1, "an indeterminate write is never repeated"
    fired(m, "write_failed_falls_back_to_resume")


def test_row_write_failed_fails_without_resume() -> None:
    m = machine(can_resume=False)
    m.handle(Signal.RUNTIME_READY, T0)
    assert m.handle(Signal.WRITE_FAILED, T0) == [
        Finish(Result.FAILED, Backend.NONE, ErrorCode.WRITE_FAILED, "")
    ]
    fired(m, "write_failed_fails_without_resume")


def test_row_text_landed_elsewhere_is_taken_back_and_fails() -> None:
    m = machine()
    m.handle(Signal.RUNTIME_READY, T0)
    effects = m.handle(Signal.TAKEN_BACK, T0 + 1.5)
    assert effects == [Finish(Result.FAILED, Backend.NONE, ErrorCode.TYPED_NOT_SUBMITTED, "")]
    assert "resume" not in m.chain and m.phase is Phase.DONE, "never typed again, never resumed"
    fired(m, "text_landed_elsewhere_is_taken_back_and_fails")


def test_row_person_keys_while_typing_take_it_back_and_defer() -> None:
    m = machine()
    m.handle(Signal.RUNTIME_READY, T0)
    effects = m.handle(Signal.PERSON_KEYS_WHILE_TYPING, T0 + 0.3)
    assert effects == [MarkOperatorBusy(), Defer(T0 + 0.3 + PARAMS.recheck_secs, ErrorCode.OPERATOR_BUSY)]
    assert m.phase is Phase.DEFERRED and m.busy_since == T0 + 0.3
    # Once the person is done, the same trigger is typed afresh.
    assert m.handle(Signal.RUNTIME_READY, T0 + 30) == [Deliver(1)]
    fired(m, "person_keys_while_typing_take_it_back_and_defer")


def test_row_ack_delivers() -> None:
    m = awaiting_ack(machine())
    assert m.handle(Signal.ACKED, T0 + 0.2) == [Finish(Result.DELIVERED, Backend.TMUX, None, "")]
    assert m.chain == ("tmux",)
    fired(m, "ack_delivers")


def test_row_typed_not_submitted_resubmits_once() -> None:
    m = awaiting_ack(machine())
    assert m.handle(Signal.TYPED_NOT_SUBMITTED, T0 + 0.2) == [Resubmit()]
    assert m.deliveries == 1, "the text is never pasted twice"
    fired(m, "typed_not_submitted_resubmits_once")


def test_row_typed_not_submitted_again_keeps_waiting() -> None:
    m = awaiting_ack(machine())
    m.handle(Signal.TYPED_NOT_SUBMITTED, T0 + 0.2)
    assert m.handle(Signal.TYPED_NOT_SUBMITTED, T0 + 0.4) == []
    assert m.phase is Phase.AWAITING_ACK
    fired(m, "typed_not_submitted_again_keeps_waiting")


def test_row_ack_timeout_retries() -> None:
    m = awaiting_ack(machine())
    assert m.handle(Signal.ACK_TIMEOUT, T0 + 8) == [Deliver(2)]
    m.handle(Signal.WRITTEN, T0 + 8)
    assert m.handle(Signal.ACK_TIMEOUT, T0 + 16) == [Deliver(3)]
    assert m.row_fire_counts["ack_timeout_retries"] == PARAMS.ack_retries == 2


def _exhaust_retries(m: TriggerMachine) -> None:
    awaiting_ack(m)
    for attempt in range(PARAMS.ack_retries):
        m.handle(Signal.ACK_TIMEOUT, T0 + 8 * (attempt + 1))
        m.handle(Signal.WRITTEN, T0 + 8 * (attempt + 1))


def test_row_ack_timeout_exhausted_falls_back_to_resume() -> None:
    m = machine()
    _exhaust_retries(m)
    assert m.handle(Signal.ACK_TIMEOUT, T0 + 24) == [LaunchResume(1)]
    (finish,) = m.handle(Signal.RESUME_OK, T0 + 25)
    assert finish == Finish(Result.TIMEOUT, Backend.RESUME, ErrorCode.ACK_TIMEOUT, "resume")
    assert m.deliveries == 3
    assert m.chain == ("tmux:ack_timeout", "tmux:ack_timeout", "tmux:ack_timeout", "resume")
    fired(m, "ack_timeout_exhausted_falls_back_to_resume")


def test_row_ack_timeout_exhausted_spawns_without_resume() -> None:
    m = machine(can_resume=False)
    _exhaust_retries(m)
    assert m.handle(Signal.ACK_TIMEOUT, T0 + 24) == [
        LaunchSpawn("ack_timeout_exhausted_spawns_without_resume")
    ]
    assert m.handle(Signal.SPAWN_OK, T0 + 25) == [
        Finish(Result.TIMEOUT, Backend.SPAWN, ErrorCode.ACK_TIMEOUT, "spawn")
    ]
    fired(m, "ack_timeout_exhausted_spawns_without_resume")


def test_row_ack_timeout_exhausted_times_out() -> None:
    m = machine(can_resume=False, can_spawn=False)
    _exhaust_retries(m)
    assert m.handle(Signal.ACK_TIMEOUT, T0 + 24) == [
        Finish(Result.TIMEOUT, Backend.NONE, ErrorCode.ACK_TIMEOUT, "")
    ]
    fired(m, "ack_timeout_exhausted_times_out")


# ---- section 9.2: the fallback chain ---------------------------------------------------------------------


def test_row_resume_launched_finishes() -> None:
    m = resuming(machine())
    assert m.handle(Signal.RESUME_OK, T0 + 1) == [
        Finish(Result.DELIVERED, Backend.RESUME, ErrorCode.RUNTIME_OFFLINE, "resume")
    ]
    fired(m, "resume_launched_finishes")


def test_row_resume_failed_tries_again() -> None:
    m = resuming(machine())
    assert m.handle(Signal.RESUME_FAILED, T0 + 1) == [LaunchResume(2)]
    fired(m, "resume_failed_tries_again")


def test_row_resume_failed_twice_spawns() -> None:
    m = resuming(machine())
    m.handle(Signal.RESUME_FAILED, T0 + 1)
    assert m.handle(Signal.RESUME_FAILED, T0 + 2) == [LaunchSpawn("resume_failed_twice_spawns")]
    assert m.resume_attempts == PARAMS.resume_max_attempts == 2
    assert m.handle(Signal.SPAWN_OK, T0 + 3) == [
        Finish(Result.DELIVERED, Backend.SPAWN, ErrorCode.RUNTIME_OFFLINE, "spawn")
    ]
    assert m.chain == ("resume:failed", "resume:failed", "spawn")
    fired(m, "resume_failed_twice_spawns")


def test_row_resume_failed_twice_fails() -> None:
    m = resuming(machine(can_spawn=False))
    m.handle(Signal.RESUME_FAILED, T0 + 1)
    assert m.handle(Signal.RESUME_FAILED, T0 + 2) == [
        Finish(Result.FAILED, Backend.NONE, ErrorCode.FALLBACK_EXHAUSTED, "")
    ]
    fired(m, "resume_failed_twice_fails")


def test_row_spawn_launched_finishes() -> None:
    m = machine()
    m.handle(Signal.CRASH_LOOP, T0, code=ErrorCode.RUNTIME_OFFLINE)
    assert m.handle(Signal.SPAWN_OK, T0 + 1) == [
        Finish(Result.DELIVERED, Backend.SPAWN, ErrorCode.RUNTIME_OFFLINE, "spawn")
    ]
    fired(m, "spawn_launched_finishes")


def test_row_spawn_failed_fails() -> None:
    m = machine()
    m.handle(Signal.CRASH_LOOP, T0)
    assert m.handle(Signal.SPAWN_FAILED, T0 + 1) == [
        Finish(Result.FAILED, Backend.NONE, ErrorCode.SPAWN_FAILED, "")
    ]
    fired(m, "spawn_failed_fails")


# ---- the agent's own screen: dialogs and start-up ------------------------------------------------------


def test_row_agent_blocked_defers_agent_blocked() -> None:
    m = machine()
    effects = m.handle(Signal.AGENT_BLOCKED, T0, defer_until=T0 + 5, code=ErrorCode.AGENT_BLOCKED)
    assert effects == [Defer(T0 + 5, ErrorCode.AGENT_BLOCKED)]
    assert m.phase is Phase.DEFERRED and m.busy_since == T0, "the wait is timed from the first look"
    fired(m, "agent_blocked_defers_agent_blocked")


def test_row_agent_blocked_past_max_defer_falls_back_to_resume() -> None:
    m = machine()
    m.handle(Signal.AGENT_BLOCKED, T0, defer_until=T0 + 5, code=ErrorCode.AGENT_BLOCKED)
    assert m.handle(Signal.BLOCKED_TOO_LONG, T0 + 60, code=ErrorCode.AGENT_BLOCKED) == [LaunchResume(1)]
    fired(m, "agent_blocked_past_max_defer_falls_back_to_resume")


def test_row_agent_blocked_past_max_defer_spawns_without_resume() -> None:
    m = machine(can_resume=False)
    assert m.handle(Signal.BLOCKED_TOO_LONG, T0, code=ErrorCode.AGENT_BLOCKED) == [
        LaunchSpawn("agent_blocked_past_max_defer_spawns_without_resume")
    ]
    fired(m, "agent_blocked_past_max_defer_spawns_without_resume")


def test_row_agent_blocked_past_max_defer_fails_without_fallback() -> None:
    m = machine(can_resume=False, can_spawn=False)
    assert m.handle(Signal.BLOCKED_TOO_LONG, T0, code=ErrorCode.AGENT_BLOCKED) == [
        Finish(Result.FAILED, Backend.NONE, ErrorCode.AGENT_BLOCKED, "")
    ]
    fired(m, "agent_blocked_past_max_defer_fails_without_fallback")


def test_row_agent_starting_defers_agent_starting() -> None:
    m = machine()
    effects = m.handle(Signal.AGENT_STARTING, T0, defer_until=T0 + 5, code=ErrorCode.AGENT_STARTING)
    assert effects == [Defer(T0 + 5, ErrorCode.AGENT_STARTING)]
    fired(m, "agent_starting_defers_agent_starting")


def test_row_agent_starting_past_max_defer_falls_back_to_resume() -> None:
    m = machine()
    assert m.handle(Signal.STARTING_TOO_LONG, T0, code=ErrorCode.AGENT_STARTING) == [LaunchResume(1)]
    fired(m, "agent_starting_past_max_defer_falls_back_to_resume")


def test_row_agent_starting_past_max_defer_spawns_without_resume() -> None:
    m = machine(can_resume=False)
    assert m.handle(Signal.STARTING_TOO_LONG, T0, code=ErrorCode.AGENT_STARTING) == [
        LaunchSpawn("agent_starting_past_max_defer_spawns_without_resume")
    ]
    fired(m, "agent_starting_past_max_defer_spawns_without_resume")


def test_row_agent_starting_past_max_defer_fails_without_fallback() -> None:
    m = machine(can_resume=False, can_spawn=False)
    assert m.handle(Signal.STARTING_TOO_LONG, T0, code=ErrorCode.AGENT_STARTING) == [
        Finish(Result.FAILED, Backend.NONE, ErrorCode.AGENT_STARTING, "")
    ]
    fired(m, "agent_starting_past_max_defer_fails_without_fallback")


def test_row_agent_busy_defers_agent_busy() -> None:
    m = machine()
    effects = m.handle(Signal.AGENT_BUSY, T0, defer_until=T0 + 5, code=ErrorCode.AGENT_BUSY)
    assert effects == [Defer(T0 + 5, ErrorCode.AGENT_BUSY)]
    assert m.busy_since == T0, "the wait counts toward the maximum defer"
    fired(m, "agent_busy_defers_agent_busy")


def test_row_agent_busy_past_max_defer_falls_back_to_resume() -> None:
    m = machine()
    assert m.handle(Signal.BUSY_TOO_LONG, T0, code=ErrorCode.AGENT_BUSY) == [LaunchResume(1)]
    fired(m, "agent_busy_past_max_defer_falls_back_to_resume")


def test_row_agent_busy_past_max_defer_spawns_without_resume() -> None:
    m = machine(can_resume=False)
    assert m.handle(Signal.BUSY_TOO_LONG, T0, code=ErrorCode.AGENT_BUSY) == [
        LaunchSpawn("agent_busy_past_max_defer_spawns_without_resume")
    ]
    fired(m, "agent_busy_past_max_defer_spawns_without_resume")


def test_row_agent_busy_past_max_defer_fails_without_fallback() -> None:
    m = machine(can_resume=False, can_spawn=False)
    assert m.handle(Signal.BUSY_TOO_LONG, T0, code=ErrorCode.AGENT_BUSY) == [
        Finish(Result.FAILED, Backend.NONE, ErrorCode.AGENT_BUSY, "")
    ]
    fired(m, "agent_busy_past_max_defer_fails_without_fallback")


# ---- tmux could not be asked: unknown is not gone ----------------------------------------------------------


def test_row_tmux_unanswered_defers_tmux_unavailable() -> None:
    # Even with a resume and a spawn available: nothing falls back while the pane may be live.
    m = machine()
    effects = m.handle(Signal.TMUX_UNANSWERED, T0, defer_until=T0 + 5, code=ErrorCode.TMUX_UNAVAILABLE)
    assert effects == [Defer(T0 + 5, ErrorCode.TMUX_UNAVAILABLE)]
    assert m.phase is Phase.DEFERRED and m.busy_since == T0, "the wait counts toward the maximum defer"
    assert m.handle(Signal.RUNTIME_READY, T0 + 5) == [Deliver(1)], "tmux back: delivered, not failed"
    fired(m, "tmux_unanswered_defers_tmux_unavailable")


def test_row_tmux_unanswered_past_max_defer_fails() -> None:
    m = machine()  # resume and spawn allowed, and still not taken: the agent may be alive in its pane
    m.handle(Signal.TMUX_UNANSWERED, T0, defer_until=T0 + 5, code=ErrorCode.TMUX_UNAVAILABLE)
    assert m.handle(Signal.TMUX_UNANSWERED_TOO_LONG, T0 + 60, code=ErrorCode.TMUX_UNAVAILABLE) == [
        Finish(Result.FAILED, Backend.NONE, ErrorCode.TMUX_UNAVAILABLE, "")
    ]
    fired(m, "tmux_unanswered_past_max_defer_fails")


# ---- delivery that is true: stuck in the box, and a restart after the write ------------------------------


def test_row_prompt_stuck_in_box_finishes_typed_not_submitted() -> None:
    m = awaiting_ack(machine())
    assert m.handle(Signal.TYPED_NOT_SUBMITTED, T0 + 0.2) == [Resubmit()]
    effects = m.handle(Signal.STUCK_IN_BOX, T0 + 8)
    assert effects == [Finish(Result.TYPED_NOT_SUBMITTED, Backend.NONE, ErrorCode.TYPED_NOT_SUBMITTED, "")]
    assert m.done, "no fallback: the text is in the box, a resume would send it twice"
    fired(m, "prompt_stuck_in_box_finishes_typed_not_submitted")


def test_row_restart_after_write_looks_again() -> None:
    m = machine()
    m.handle(Signal.RUNTIME_READY, T0)
    again = TriggerMachine.from_dict(PARAMS, m.to_dict())
    assert again.phase is Phase.DELIVERING
    effects = again.handle(Signal.RESTARTED_AFTER_WRITE, T0 + 30)
    assert effects == [WaitAck(T0 + 30 + PARAMS.ack_timeout_secs)], "looks, never types again"
    assert again.recovered and again.deliveries == 1
    fired(again, "restart_after_write_looks_again")
    assert again.handle(Signal.ACKED, T0 + 31) == [Finish(Result.DELIVERED, Backend.TMUX, None, "")]


def test_row_recovered_ack_timeout_times_out() -> None:
    m = awaiting_ack(machine())
    again = TriggerMachine.from_dict(PARAMS, m.to_dict())
    again.handle(Signal.RESTARTED_AFTER_WRITE, T0 + 30)
    effects = again.handle(Signal.ACK_TIMEOUT, T0 + 40)
    assert effects == [Finish(Result.TIMEOUT, Backend.NONE, ErrorCode.ACK_TIMEOUT, "")]
    assert "resume" not in again.chain, "no retry and no fallback after a restart: never sent twice"
    fired(again, "recovered_ack_timeout_times_out")


# ---- the table as a whole ------------------------------------------------------------------------------


def test_every_table_row_has_a_test_named_after_it() -> None:
    names = {
        name.removeprefix("test_row_") for name in dir(sys.modules[__name__]) if name.startswith("test_row_")
    }
    assert ROW_NAMES - names == set()
    assert names - ROW_NAMES == set(), "a test names a row that no longer exists"


def test_a_signal_no_row_takes_is_refused_not_dropped() -> None:
    m = machine()
    with pytest.raises(UnexpectedSignal, match="acked in phase received"):
        m.handle(Signal.ACKED, T0)
    m.handle(Signal.THREAD_BLOCKED, T0)
    with pytest.raises(UnexpectedSignal):
        m.handle(Signal.RUNTIME_READY, T0)


def test_machine_state_survives_a_round_trip_through_the_queue() -> None:
    m = machine()
    m.handle(Signal.OPERATOR_BUSY, T0, defer_until=T0 + 5, code=ErrorCode.OPERATOR_BUSY)
    again = TriggerMachine.from_dict(PARAMS, m.to_dict())
    assert again.phase is Phase.DEFERRED and again.busy_since == T0 and again.code is ErrorCode.OPERATOR_BUSY
    assert again.handle(Signal.COLLISION_MAX_DEFER, T0 + 60) == [EmitCollision(T0), LaunchResume(1)]


def test_every_action_a_row_can_name_has_a_handler() -> None:
    assert set(TriggerMachine._ACTIONS) == set(Action)


def test_a_failed_row_without_its_own_code_reports_the_code_the_trigger_carried() -> None:
    # No row of TABLE is like this today; the rule is what a new one would get. The pane as its
    # backend is where it matters: a delivered pane row reports no code, a failed one keeps it.
    row = Row("failed_without_code", frozenset({Phase.DELIVERING}), Signal.WRITE_FAILED, Guard.NONE,
              Phase.DONE, (Action.FINISH,), result=Result.FAILED, backend=Backend.TMUX)  # fmt: skip
    assert _final_code(row, Result.FAILED, ErrorCode.RUNTIME_OFFLINE) is ErrorCode.RUNTIME_OFFLINE
