"""The policies of seed 002, sections 11 to 14: which signal a situation gives, the thread guard,
the override audit fields, the payload rules and the agent-kind profiles. Time is a number."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from kronii.supervisor.core.agent_kinds import DEFAULT_KINDS, AgentKind, KindBook, render_argv
from kronii.supervisor.core.model import (
    CollisionGate,
    ErrorCode,
    GuardFacts,
    PaneFacts,
    RuntimeFacts,
    RuntimeStatus,
    Situation,
)
from kronii.supervisor.core.params import SupervisorParams
from kronii.supervisor.core.payload import PayloadError, clean_prompt
from kronii.supervisor.core.policy import ThreadState, assess, observe_turn, override_audit
from kronii.supervisor.core.table import Signal

P = SupervisorParams()
NOW = 2_000_000.0


def situation(
    *,
    runtime: RuntimeFacts | None = None,
    pane: PaneFacts | None = None,
    guards: GuardFacts | None = None,
    force: bool = False,
) -> Situation:
    return Situation(
        runtime=runtime if runtime is not None else RuntimeFacts("rt-1", "codex", session_id="s-1"),
        pane=pane if pane is not None else PaneFacts(),
        guards=guards or GuardFacts(),
        force_override=force,
    )


# ---- admission --------------------------------------------------------------------------------------


def test_live_runtime_with_a_quiet_pane_is_ready_and_the_gate_enforced() -> None:
    verdict = assess(situation(), P, NOW)
    assert verdict.signal is Signal.RUNTIME_READY
    assert verdict.collision_gate is CollisionGate.ENFORCED


def test_ten_attempts_in_a_minute_defer_with_trigger_rate_limited_until_the_oldest_leaves() -> None:
    attempts = tuple(NOW - 50 + i for i in range(10))
    verdict = assess(situation(guards=GuardFacts(recent_attempts=attempts)), P, NOW)
    assert verdict.signal is Signal.RATE_LIMITED and verdict.code is ErrorCode.TRIGGER_RATE_LIMITED
    assert verdict.defer_until == attempts[0] + 60
    nine = attempts[1:]
    assert assess(situation(guards=GuardFacts(recent_attempts=nine)), P, NOW).signal is Signal.RUNTIME_READY
    old = (NOW - 61, *nine)
    assert assess(situation(guards=GuardFacts(recent_attempts=old)), P, NOW).signal is Signal.RUNTIME_READY


def test_a_rate_limit_of_zero_turns_the_limiter_off() -> None:
    attempts = tuple(NOW - i for i in range(50))
    verdict = assess(
        situation(guards=GuardFacts(recent_attempts=attempts)), SupervisorParams(rate_limit=0), NOW
    )
    assert verdict.signal is Signal.RUNTIME_READY


def test_blocked_thread_and_loop_come_before_everything_else() -> None:
    guards = GuardFacts(thread_blocked=True, repeats_without_progress=True)
    assert assess(situation(runtime=None, guards=guards), P, NOW).code is ErrorCode.THREAD_AUTO_BLOCKED
    loop = GuardFacts(repeats_without_progress=True)
    assert assess(situation(guards=loop), P, NOW).code is ErrorCode.TRIGGER_LOOP_SUPPRESSED


def test_paused_runtime_defers_unless_forced() -> None:
    runtime = RuntimeFacts("rt-1", "codex", paused=True)
    assert assess(situation(runtime=runtime), P, NOW).signal is Signal.PAUSED
    assert assess(situation(runtime=runtime, force=True), P, NOW).signal is Signal.RUNTIME_READY


def test_cooldown_after_three_failures_lasts_cooldown_secs() -> None:
    guards = GuardFacts(consecutive_failures=3, last_failure_at=NOW - 10)
    verdict = assess(situation(guards=guards), P, NOW)
    assert verdict.signal is Signal.COOLDOWN and verdict.defer_until == NOW - 10 + P.cooldown_secs
    later = GuardFacts(consecutive_failures=3, last_failure_at=NOW - P.cooldown_secs)
    assert assess(situation(guards=later), P, NOW).signal is Signal.RUNTIME_READY


@pytest.mark.parametrize(
    ("runtime", "pane"),
    [
        (None, None),
        (RuntimeFacts("rt", "codex", status=RuntimeStatus.OFFLINE), PaneFacts()),
        (RuntimeFacts("rt", "codex", pid_alive=False), PaneFacts()),
        (RuntimeFacts("rt", "codex", managed=False), PaneFacts()),
        (RuntimeFacts("rt", "codex"), PaneFacts(exists=False)),
    ],
    ids=["missing", "offline", "dead_pid", "unmanaged", "pane_gone"],
)
def test_unreachable_runtime_skips_the_process_trigger(
    runtime: RuntimeFacts | None, pane: PaneFacts | None
) -> None:
    verdict = Situation(runtime=runtime, pane=pane)
    assert assess(verdict, P, NOW).signal is Signal.RUNTIME_UNAVAILABLE


def test_tmux_not_answering_about_a_live_runtimes_pane_defers_with_tmux_unavailable() -> None:
    # The rule of issue 26 item 13: tmux unreachable is not "the pane is gone".
    pane = PaneFacts(
        agent_in_foreground=False, agent_state="", unanswered="tmux did not answer about pane %3: x"
    )
    verdict = assess(situation(pane=pane), P, NOW)
    assert verdict.signal is Signal.TMUX_UNANSWERED and verdict.code is ErrorCode.TMUX_UNAVAILABLE
    assert verdict.defer_until == NOW + P.recheck_secs
    late = assess(situation(pane=pane), P, NOW, busy_since=NOW - P.max_defer_secs)
    assert late.signal is Signal.TMUX_UNANSWERED_TOO_LONG and late.code is ErrorCode.TMUX_UNAVAILABLE


def test_a_pane_tmux_says_is_gone_is_runtime_offline() -> None:
    gone = PaneFacts(exists=False, agent_in_foreground=False, agent_state="exited")
    verdict = assess(situation(pane=gone), P, NOW)
    assert verdict.signal is Signal.RUNTIME_UNAVAILABLE and verdict.code is ErrorCode.RUNTIME_OFFLINE


@pytest.mark.parametrize(
    "runtime",
    [
        RuntimeFacts("rt", "codex", status=RuntimeStatus.OFFLINE),
        RuntimeFacts("rt", "codex", pid_alive=False),
        RuntimeFacts("rt", "codex", managed=False),
    ],
    ids=["offline", "dead_pid", "unmanaged"],
)
def test_a_runtime_known_unreachable_without_tmux_is_not_waited_for(runtime: RuntimeFacts) -> None:
    pane = PaneFacts(unanswered="tmux did not answer about pane %3: x")
    assert assess(situation(runtime=runtime, pane=pane), P, NOW).signal is Signal.RUNTIME_UNAVAILABLE


def test_three_failures_in_fifteen_minutes_is_a_crash_loop() -> None:
    runtime = RuntimeFacts("rt", "codex", pid_alive=False)
    failures = (NOW - 800, NOW - 400, NOW - 10)
    verdict = assess(situation(runtime=runtime, guards=GuardFacts(recent_failures=failures)), P, NOW)
    assert verdict.signal is Signal.CRASH_LOOP
    spread = (NOW - 1000, NOW - 400, NOW - 10)
    assert assess(situation(runtime=runtime, guards=GuardFacts(recent_failures=spread)), P, NOW).signal is (
        Signal.RUNTIME_UNAVAILABLE
    )


def test_heartbeat_older_than_twelve_hours_means_a_stale_session() -> None:
    stale = RuntimeFacts("rt", "codex", status=RuntimeStatus.OFFLINE, last_heartbeat_at=NOW - 12 * 3600 - 1)
    assert assess(situation(runtime=stale), P, NOW).signal is Signal.SESSION_STALE
    fresh = RuntimeFacts("rt", "codex", status=RuntimeStatus.OFFLINE, last_heartbeat_at=NOW - 11 * 3600)
    assert assess(situation(runtime=fresh), P, NOW).signal is Signal.RUNTIME_UNAVAILABLE


def test_a_shell_in_the_foreground_is_pane_not_agent_even_when_forced() -> None:
    pane = PaneFacts(agent_in_foreground=False, foreground_command="bash")
    assert assess(situation(pane=pane), P, NOW).signal is Signal.PANE_NOT_AGENT
    assert assess(situation(pane=pane, force=True), P, NOW).signal is Signal.PANE_NOT_AGENT


def test_recent_keys_from_an_attached_client_defer_and_recheck_in_five_seconds() -> None:
    verdict = assess(situation(pane=PaneFacts(human_activity_at=NOW - 3)), P, NOW)
    assert verdict.signal is Signal.OPERATOR_BUSY and verdict.operator_busy
    assert verdict.defer_until == NOW + P.recheck_secs
    quiet = assess(situation(pane=PaneFacts(human_activity_at=NOW - 20)), P, NOW)
    assert quiet.signal is Signal.RUNTIME_READY


def test_an_unsent_draft_in_the_input_line_is_a_person_typing() -> None:
    verdict = assess(situation(pane=PaneFacts(draft="half a thought")), P, NOW)
    assert verdict.signal is Signal.OPERATOR_BUSY


def test_busy_for_sixty_seconds_is_collision_max_defer() -> None:
    pane = PaneFacts(human_activity_at=NOW - 1)
    assert assess(situation(pane=pane), P, NOW, busy_since=NOW - 59).signal is Signal.OPERATOR_BUSY
    verdict = assess(situation(pane=pane), P, NOW, busy_since=NOW - 60)
    assert verdict.signal is Signal.COLLISION_MAX_DEFER and verdict.code is ErrorCode.COLLISION_MAX_DEFER


def test_force_override_bypasses_the_collision_gate_and_says_so() -> None:
    verdict = assess(situation(pane=PaneFacts(human_activity_at=NOW - 1), force=True), P, NOW)
    assert verdict.signal is Signal.RUNTIME_READY
    assert verdict.collision_gate is CollisionGate.BYPASSED and verdict.operator_busy


def test_force_override_never_types_into_a_persons_draft() -> None:
    verdict = assess(situation(pane=PaneFacts(draft="fix the login bug"), force=True), P, NOW)
    assert verdict.signal is Signal.OPERATOR_BUSY and verdict.collision_gate is CollisionGate.ENFORCED


def test_a_dialog_on_the_agents_screen_defers_even_a_forced_trigger() -> None:
    pane = PaneFacts(agent_state="blocked", dialog="Trust this folder?")
    verdict = assess(situation(pane=pane, force=True), P, NOW)
    assert verdict.signal is Signal.AGENT_BLOCKED and verdict.code is ErrorCode.AGENT_BLOCKED
    assert verdict.defer_until == NOW + P.recheck_secs
    late = assess(situation(pane=pane), P, NOW, busy_since=NOW - P.max_defer_secs)
    assert late.signal is Signal.BLOCKED_TOO_LONG


def test_an_agent_without_its_input_box_yet_is_waited_for() -> None:
    verdict = assess(situation(pane=PaneFacts(agent_state="starting")), P, NOW)
    assert verdict.signal is Signal.AGENT_STARTING and verdict.code is ErrorCode.AGENT_STARTING


def test_an_exited_agent_is_not_live_and_goes_to_the_fallback_chain() -> None:
    verdict = assess(situation(pane=PaneFacts(agent_state="exited")), P, NOW)
    assert verdict.signal is Signal.RUNTIME_UNAVAILABLE


def test_admission_checks_speak_in_the_documented_order() -> None:
    # Every check applies at first; lifting them one at a time must reveal the next in
    # docs/architecture.md's order, so a reordering shows up as the wrong signal.
    facts: dict[str, Any] = {
        "guards": GuardFacts(
            thread_blocked=True,
            repeats_without_progress=True,
            recent_attempts=tuple(NOW - i for i in range(10)),
            consecutive_failures=3,
            last_failure_at=NOW - 10,
        ),
        "runtime": RuntimeFacts("rt", "codex", paused=True, pid_alive=False),
        "pane": PaneFacts(agent_in_foreground=False, agent_state="blocked", human_activity_at=NOW - 1),
    }
    lifts: list[tuple[Signal, str, dict[str, Any]]] = [
        (Signal.THREAD_BLOCKED, "guards", {"thread_blocked": False}),
        (Signal.LOOP_SUPPRESSED, "guards", {"repeats_without_progress": False}),
        (Signal.RATE_LIMITED, "guards", {"recent_attempts": ()}),
        (Signal.PAUSED, "runtime", {"paused": False}),
        (Signal.COOLDOWN, "guards", {"consecutive_failures": 0}),
        (Signal.RUNTIME_UNAVAILABLE, "runtime", {"pid_alive": True}),
        (Signal.PANE_NOT_AGENT, "pane", {"agent_in_foreground": True}),
        (Signal.AGENT_BLOCKED, "pane", {"agent_state": "idle"}),
        (Signal.OPERATOR_BUSY, "pane", {"human_activity_at": None}),
    ]
    seen = []
    for _, part, change in lifts:
        seen.append(assess(situation(**facts), P, NOW).signal)
        facts[part] = replace(facts[part], **change)
    seen.append(assess(situation(**facts), P, NOW).signal)
    assert seen == [signal for signal, _, _ in lifts] + [Signal.RUNTIME_READY]


def test_a_crash_loop_comes_before_a_stale_session() -> None:
    stale = RuntimeFacts("rt", "codex", status=RuntimeStatus.OFFLINE, last_heartbeat_at=NOW - 13 * 3600)
    failures = GuardFacts(recent_failures=(NOW - 30, NOW - 20, NOW - 10))
    assert assess(situation(runtime=stale, guards=failures), P, NOW).signal is Signal.CRASH_LOOP


# ---- section 14: thread guard -------------------------------------------------------------------------


def _turn(
    state: ThreadState, *, prompt: str = "p", marker: str = "", finding: str = "", epoch: int = 0
) -> tuple[ThreadState, bool, bool]:
    verdict = observe_turn(
        state, prompt_hash=prompt, progress_marker=marker, finding_key=finding, progress_epoch=epoch, params=P
    )
    return verdict.state, verdict.blocked, verdict.loop


def test_twenty_turns_without_progress_block_the_thread() -> None:
    state = ThreadState()
    state, blocked, _ = _turn(state, marker="cursor-7")
    for turn in range(1, 20):
        state, blocked, _ = _turn(state, prompt=f"p{turn}", marker="cursor-7")
        assert not blocked, turn
    state, blocked, _ = _turn(state, prompt="p20", marker="cursor-7")
    assert blocked and state.blocked and "20 turns" in state.blocked_reason
    _, still, _ = _turn(state, prompt="p21", marker="cursor-8")
    assert still, "a blocked thread stays blocked until an operator clears it"


def test_progress_resets_the_no_progress_count() -> None:
    state = ThreadState()
    for turn in range(19):
        state, _, _ = _turn(state, prompt=f"p{turn}", marker="a")
    state, blocked, _ = _turn(state, prompt="x", marker="b")
    assert not blocked and state.no_progress_turns == 0


def test_the_same_unresolved_finding_three_times_blocks_the_thread() -> None:
    state = ThreadState()
    state, blocked, _ = _turn(state, prompt="1", finding="F-1")
    state, blocked, _ = _turn(state, prompt="2", finding="F-1")
    assert not blocked
    state, blocked, _ = _turn(state, prompt="3", finding="F-1")
    assert blocked and "F-1" in state.blocked_reason
    other, blocked_other, _ = _turn(ThreadState(), prompt="1", finding="F-1")
    other, blocked_other, _ = _turn(other, prompt="2", finding="F-2")
    assert not blocked_other and other.finding_repeats == 1


def test_the_same_prompt_without_runtime_progress_is_a_loop() -> None:
    state, _, loop = _turn(ThreadState(), prompt="same", epoch=4)
    assert not loop
    state, _, loop = _turn(state, prompt="same", epoch=4)
    assert loop
    _, _, loop = _turn(state, prompt="same", epoch=5)
    assert not loop, "an ack or heartbeat in between is progress"


def test_thread_state_round_trips_through_a_dict() -> None:
    state, _, _ = _turn(ThreadState(), prompt="h", marker="m", finding="f")
    assert ThreadState.from_dict(state.to_dict()) == state


# ---- section 13.2: override audit fields ----------------------------------------------------------------


def test_force_override_audit_fields_name_intent_prefix_and_gate() -> None:
    fields = override_audit(
        requested=True, reason="coordinator_override: unblock", gate=CollisionGate.BYPASSED
    )
    assert fields == {
        "force_override_requested": True,
        "force_override_applied": True,
        "override_intent": "coordinator_override",
        "override_reason_prefix": "coordinator_override:",
        "collision_gate": "bypassed",
    }
    human = override_audit(requested=True, reason="because", gate=CollisionGate.BYPASSED)
    assert (
        human["override_intent"] == "human_override" and human["override_reason_prefix"] == "human_override:"
    )
    plain = override_audit(requested=False, reason="", gate=CollisionGate.ENFORCED)
    assert plain["force_override_applied"] is False and plain["collision_gate"] == "enforced"
    refused = override_audit(requested=True, reason="human_override: x", gate=CollisionGate.NOT_EVALUATED)
    assert refused["force_override_requested"] is True and refused["force_override_applied"] is False


# ---- section 11: payload ------------------------------------------------------------------------------


def test_short_single_line_goes_literal_and_long_or_multiline_goes_by_paste() -> None:
    assert clean_prompt("review PR 12", max_bytes=100, literal_max_chars=50).literal
    assert not clean_prompt("a\nb", max_bytes=100, literal_max_chars=50).literal
    assert not clean_prompt("x" * 51, max_bytes=100, literal_max_chars=50).literal


def test_control_characters_and_escape_sequences_are_stripped_newlines_kept() -> None:
    raw = "fix \x1b[31mred\x1b[0m bug\x07\r\nline two\x00\x08\tend\x1b]0;title\x07\n\n\n"
    payload = clean_prompt(raw, max_bytes=1000, literal_max_chars=200)
    assert payload.text == "fix red bug\nline two    end"
    assert payload.last_line == "line two    end"


def test_oversized_or_empty_payloads_are_refused_with_a_reason() -> None:
    with pytest.raises(PayloadError, match="limit is 10"):
        clean_prompt("x" * 11, max_bytes=10, literal_max_chars=5)
    with pytest.raises(PayloadError, match="empty"):
        clean_prompt("\x1b[0m\x07\n", max_bytes=10, literal_max_chars=5)


# ---- agent kinds --------------------------------------------------------------------------------------


def test_codex_waits_past_its_120_ms_paste_window_before_the_named_enter_key() -> None:
    codex = DEFAULT_KINDS["codex"]
    assert codex.submit_pause_secs > 0.12
    assert codex.submit_keys == ("Enter",)


def test_resume_template_renders_to_an_argument_vector_without_a_shell() -> None:
    argv = render_argv(DEFAULT_KINDS["codex"].resume_argv, {"session_id": "s-9", "prompt": "a; rm -rf / {x}"})
    assert argv == ["codex", "exec", "resume", "s-9", "a; rm -rf / {x}"]


def test_kind_overrides_merge_with_defaults_and_unknown_fields_are_refused() -> None:
    book = KindBook.from_overrides({"codex": {"submit_pause_secs": 0}, "aider": {"input_marker": ">"}})
    assert book.get("codex").submit_pause_secs == 0 and book.get("codex").resume_argv
    assert book.get("aider").input_marker == ">"
    assert book.get("unknown-kind").name == "generic"
    with pytest.raises(ValueError, match="unknown field"):
        KindBook.from_overrides({"codex": {"colour": "red"}})
    with pytest.raises(ValueError, match="unknown placeholder"):
        AgentKind(name="x", resume_argv=("x", "{password}"))


def test_params_refuse_a_max_defer_shorter_than_the_recheck() -> None:
    with pytest.raises(ValueError, match="max_defer_secs"):
        SupervisorParams(recheck_secs=5, max_defer_secs=1)
