"""The orchestrator's wake policy (seed 002, section 8.4) row by row, the thread guard of section 14,
the wake's one trigger id and its one-line prompt (core/wake_policy.py, core/threads.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kronii.supervisor.core.threads import (
    KRONII,
    PERSON,
    GuardLimits,
    MessageKind,
    Participant,
    ThreadGuard,
    ThreadMessage,
    ThreadView,
    addressed_to,
    after_message,
    finding_key_of,
)
from kronii.supervisor.core.wake_policy import (
    ROWS,
    Situation,
    Verdict,
    WakeLimits,
    WakeReason,
    decide,
    wake_prompt,
    wake_trigger_id,
)

NOW = 1_800_000_000.0


def msg(seq: int, author: str, kind: MessageKind = MessageKind.MESSAGE, to: tuple[str, ...] = (), *,
        at: float = NOW - 100, body: str = "text") -> ThreadMessage:  # fmt: skip
    return ThreadMessage("w", "t", seq, author, kind, body, at, to)


def view(
    cursors: dict[str, int], *, last: int = 0, blocked: bool = False, seen: float | None = None
) -> ThreadView:
    return ThreadView(
        workspace_id="w", thread_id="t", last_seq=last, created_at=NOW - 1000, updated_at=NOW,
        guard=ThreadGuard(blocked=blocked, blocked_reason="20 turns" if blocked else ""),
        participants=tuple(Participant(name, cursor, seen) for name, cursor in cursors.items()),
    )  # fmt: skip


def situation(messages: list[ThreadMessage], cursor: int = 0, **changes: object) -> Situation:
    thread = view({"reviewer": cursor, "executioner": 0}, last=max((m.seq for m in messages), default=0))
    base = Situation(
        agent="reviewer", thread=thread, newer=tuple(m for m in messages if m.seq > cursor), read_unanswered=None,
        has_runtime=True, paused=False, active=False, sync_for="", now=NOW,
        limits=WakeLimits(lag_messages=3, dormancy_secs=60),
    )  # fmt: skip
    return replace(base, **changes)  # type: ignore[arg-type]


RESULT_FOR_REVIEWER = [msg(1, "executioner", MessageKind.RESULT, ("reviewer",))]


def test_row_unread_a_message_addressed_to_the_agent_wakes_it() -> None:
    decision = decide(situation(RESULT_FOR_REVIEWER))
    assert (decision.verdict, decision.reason, decision.upto_seq) == (Verdict.WAKE, WakeReason.UNREAD, 1)


def test_row_unread_a_message_to_no_one_in_particular_is_for_everyone_but_its_author() -> None:
    assert decide(situation([msg(1, "executioner")])).reason is WakeReason.UNREAD
    assert decide(situation([msg(1, "reviewer")])).verdict is Verdict.NOTHING


def test_row_lag_more_unread_turns_than_the_threshold_wake_it_to_catch_up_once_per_cursor() -> None:
    others = [msg(n, "executioner", to=("person",)) for n in range(1, 7)]
    decision = decide(situation(others[:4]))
    assert (decision.verdict, decision.reason, decision.upto_seq) == (Verdict.WAKE, WakeReason.LAG, 0)
    assert decide(situation(others[:3])).verdict is Verdict.NOTHING
    # More messages while it has not read: the same wake (the same id), not a new one.
    assert decide(situation(others)).upto_seq == 0
    assert decide(situation(others, cursor=1)).upto_seq == 1


def test_row_dormancy_what_it_read_and_left_unanswered_past_the_threshold_wakes_it_again() -> None:
    waiting = msg(1, "executioner", MessageKind.RESULT, ("reviewer",), at=NOW - 120)
    decision = decide(situation([waiting], cursor=1, read_unanswered=waiting))
    assert (decision.verdict, decision.reason, decision.upto_seq) == (Verdict.WAKE, WakeReason.DORMANT, 1)
    recent = replace(waiting, at=NOW - 30)
    assert decide(situation([recent], cursor=1, read_unanswered=recent)).verdict is Verdict.NOTHING


def test_row_already_active_an_agent_with_a_wake_in_flight_or_deferred_is_not_woken_again() -> None:
    decision = decide(situation(RESULT_FOR_REVIEWER, active=True))
    assert (decision.verdict, decision.row) == (Verdict.HOLD, "already active")


def test_row_blocked_thread_no_agent_is_woken_on_a_thread_the_guard_blocked() -> None:
    blocked = situation(RESULT_FOR_REVIEWER)
    blocked = replace(blocked, thread=replace(blocked.thread, guard=ThreadGuard(blocked=True)))
    assert (decide(blocked).verdict, decide(blocked).row) == (Verdict.HOLD, "blocked thread")


def test_row_paused_runtime_a_paused_agent_is_held_until_resumed() -> None:
    decision = decide(situation(RESULT_FOR_REVIEWER, paused=True))
    assert (decision.verdict, decision.row) == (Verdict.HOLD, "paused runtime")


def test_row_no_runtime_an_agent_not_running_is_held_until_one_registers() -> None:
    assert decide(situation(RESULT_FOR_REVIEWER, has_runtime=False)).row == "no runtime"


def test_row_sync_after_a_persons_work_only_the_sync_addressee_is_woken() -> None:
    sync = msg(2, KRONII, MessageKind.SYNC, ("coordinator",))
    held = decide(situation([*RESULT_FOR_REVIEWER, sync], sync_for="coordinator"))
    assert (held.verdict, held.row) == (Verdict.HOLD, "waiting for sync")
    first = decide(situation([msg(2, KRONII, MessageKind.SYNC, ("reviewer",))], sync_for="reviewer"))
    assert (first.verdict, first.reason) == (Verdict.WAKE, WakeReason.SYNC)


def test_a_sync_note_to_a_worker_with_work_waiting_is_that_works_wake_not_a_second_one() -> None:
    work = decide(situation(RESULT_FOR_REVIEWER))
    sync = msg(2, KRONII, MessageKind.SYNC, ("reviewer",))
    with_sync = decide(situation([*RESULT_FOR_REVIEWER, sync], sync_for="reviewer"))
    assert (with_sync.reason, with_sync.upto_seq) == (work.reason, work.upto_seq) == (WakeReason.UNREAD, 1)
    assert sync in with_sync.messages


def test_every_row_is_named_once_and_the_last_row_always_holds() -> None:
    names = [row.name for row in ROWS]
    assert len(names) == len(set(names))
    assert ROWS[-1].holds(situation([]))


def test_kronii_notes_are_never_unread_and_never_change_a_wakes_id() -> None:
    note = msg(2, KRONII, MessageKind.OUTCOME)
    assert not addressed_to(note, "reviewer")
    before = decide(situation(RESULT_FOR_REVIEWER))
    after = decide(situation([*RESULT_FOR_REVIEWER, note, replace(note, seq=3)]))
    assert after.upto_seq == before.upto_seq == 1


def test_a_wake_has_one_trigger_id_for_its_thread_agent_reason_and_message() -> None:
    one = wake_trigger_id("w", "t", "reviewer", WakeReason.UNREAD, 4)
    assert one == wake_trigger_id("w", "t", "reviewer", WakeReason.UNREAD, 4)
    others = {
        wake_trigger_id("w", "t", "reviewer", WakeReason.UNREAD, 5),
        wake_trigger_id("w", "t", "reviewer", WakeReason.LAG, 4),
        wake_trigger_id("w", "t", "executioner", WakeReason.UNREAD, 4),
        wake_trigger_id("w", "t2", "reviewer", WakeReason.UNREAD, 4),
    }
    assert one not in others and len(others) == 4
    assert one.startswith("wake-unread-") and len(one) <= 128


def test_the_wake_prompt_is_one_line_within_its_limit_and_names_how_to_read_and_answer() -> None:
    long = msg(1, "executioner", MessageKind.RESULT, ("reviewer",), body="line one\nline two " + "x" * 3000)
    decision = decide(situation([long]))
    prompt = wake_prompt(decision, "w", "t", 400)
    assert "\n" not in prompt and len(prompt) <= 400
    assert prompt.startswith("[kronii] thread t: 1 new for you: #1 executioner (result): line one / line two")
    assert prompt.endswith(
        "kronii thread read t --workspace w ; answer: kronii thread post t --workspace w TEXT"
    )


# ---- section 14 on a thread -------------------------------------------------------------------------


LIMITS = GuardLimits(no_progress_turns=20, repeated_finding_cycles=3)


def run(guard: ThreadGuard, *messages: ThreadMessage) -> ThreadGuard:
    for message in messages:
        guard = after_message(guard, message, LIMITS)
    return guard


def test_twenty_turns_without_progress_block_the_thread_and_progress_starts_the_count_again() -> None:
    chat = [msg(n, "executioner" if n % 2 else "reviewer") for n in range(1, 20)]
    assert not run(ThreadGuard(), *chat).blocked
    assert run(ThreadGuard(), *chat, msg(20, "reviewer")).blocked
    reset = run(ThreadGuard(), *chat, msg(20, "executioner", MessageKind.RESULT), msg(21, "reviewer"))
    assert not reset.blocked and reset.turns_without_progress == 1


@pytest.mark.parametrize("progress", [MessageKind.RESULT, MessageKind.RESOLVED])
def test_a_result_or_a_resolution_is_progress(progress: MessageKind) -> None:
    guard = run(ThreadGuard(), *[msg(n, "a") for n in range(1, 10)], msg(10, "b", progress))
    assert guard.turns_without_progress == 0


def test_a_word_from_the_person_is_progress_and_kronii_notes_are_not_turns() -> None:
    guard = run(ThreadGuard(), *[msg(n, "a") for n in range(1, 10)], msg(10, PERSON))
    assert guard.turns_without_progress == 0
    noted = run(ThreadGuard(), *[msg(n, KRONII, MessageKind.OUTCOME) for n in range(1, 40)])
    assert noted == ThreadGuard()


def test_the_same_finding_three_times_unresolved_blocks_the_thread() -> None:
    finding = msg(1, "reviewer", MessageKind.FINDING, body="No test for line 12")
    fix = msg(2, "executioner", MessageKind.RESULT)
    again = replace(finding, seq=3, body="no test for LINE 14")  # the same words, the line moved
    guard = run(ThreadGuard(), finding, fix, again, fix, replace(finding, seq=5))
    assert guard.blocked and "3 times" in guard.blocked_reason
    assert finding_key_of(finding.body) == finding_key_of(again.body)


def test_a_resolution_or_another_finding_between_starts_the_repeats_again() -> None:
    finding = msg(1, "reviewer", MessageKind.FINDING, body="no test")
    resolved = msg(2, "reviewer", MessageKind.RESOLVED)
    other = msg(3, "reviewer", MessageKind.FINDING, body="a different problem")
    assert not run(ThreadGuard(), finding, finding, resolved, finding).blocked
    assert not run(ThreadGuard(), finding, finding, other, finding).blocked


def test_a_blocked_thread_stays_blocked_whatever_comes_next() -> None:
    blocked = ThreadGuard(blocked=True, blocked_reason="x")
    assert run(blocked, msg(1, PERSON), msg(2, "a", MessageKind.RESOLVED)) == blocked
