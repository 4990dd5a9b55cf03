"""Every outcome has a `detail` sentence naming the real reason (issue 28: a cooldown answered with
an empty one). The walk goes through the trigger machine (core/machine.py over TABLE) from every
start, along every signal a row takes, and for each row that ends or defers a trigger builds the
detail as the use case does: admission's sentence for an admission signal, and nothing at all said
on the way for the others (the worst case: the code's own sentence must then speak)."""

from __future__ import annotations

import json
from collections import deque

import pytest
from kronii.supervisor.core.job import RETRY_ADVICE, admission_detail, deferral_detail, ended_detail
from kronii.supervisor.core.machine import Defer, Finish, TriggerMachine
from kronii.supervisor.core.model import (
    Backend,
    ErrorCode,
    GuardFacts,
    PaneFacts,
    Result,
    RuntimeFacts,
    Situation,
)
from kronii.supervisor.core.params import SupervisorParams
from kronii.supervisor.core.table import TABLE, Action, Phase, Signal

P = SupervisorParams()
T0 = 1_000_000.0

# The code admission (core/policy.assess) gives each signal it speaks.
ADMISSION_CODES: dict[Signal, ErrorCode | None] = {
    Signal.RUNTIME_READY: None,
    Signal.RUNTIME_UNAVAILABLE: ErrorCode.RUNTIME_OFFLINE,
    Signal.SESSION_STALE: ErrorCode.RUNTIME_OFFLINE,
    Signal.CRASH_LOOP: ErrorCode.RUNTIME_OFFLINE,
    Signal.PANE_NOT_AGENT: ErrorCode.PANE_NOT_AGENT,
    Signal.OPERATOR_BUSY: ErrorCode.OPERATOR_BUSY,
    Signal.COLLISION_MAX_DEFER: ErrorCode.COLLISION_MAX_DEFER,
    Signal.RATE_LIMITED: ErrorCode.TRIGGER_RATE_LIMITED,
    Signal.COOLDOWN: ErrorCode.TRIGGER_COOLDOWN,
    Signal.PAUSED: ErrorCode.RUNTIME_PAUSED,
    Signal.THREAD_BLOCKED: ErrorCode.THREAD_AUTO_BLOCKED,
    Signal.LOOP_SUPPRESSED: ErrorCode.TRIGGER_LOOP_SUPPRESSED,
    Signal.USER_HOLDS_DESKTOP: ErrorCode.USER_HOLDS_DESKTOP,
    Signal.AGENT_BLOCKED: ErrorCode.AGENT_BLOCKED,
    Signal.BLOCKED_TOO_LONG: ErrorCode.AGENT_BLOCKED,
    Signal.AGENT_STARTING: ErrorCode.AGENT_STARTING,
    Signal.STARTING_TOO_LONG: ErrorCode.AGENT_STARTING,
    Signal.AGENT_BUSY: ErrorCode.AGENT_BUSY,
    Signal.BUSY_TOO_LONG: ErrorCode.AGENT_BUSY,
    Signal.TMUX_UNANSWERED: ErrorCode.TMUX_UNAVAILABLE,
    Signal.TMUX_UNANSWERED_TOO_LONG: ErrorCode.TMUX_UNAVAILABLE,
}
ADMISSION_PHASES = {Phase.RECEIVED, Phase.DEFERRED}
# A situation with something to say for every admission signal.
SITUATION = Situation(
    runtime=RuntimeFacts(runtime_id="rt-1", kind="generic"),
    pane=PaneFacts(
        draft="half a sentence",
        dialog="Do you trust the files in this folder?",
        foreground_command="bash",
        unanswered="tmux did not answer about pane %1 within 2 s",
    ),
    guards=GuardFacts(consecutive_failures=3, last_failure_at=T0 - 1, recent_attempts=(T0 - 2,) * 10),
)


def _sentence(text: str) -> bool:
    """A sentence: words, not a code, not a dangling joint."""
    return len(text) >= 20 and " " in text and text[0].isalnum() and text.rstrip()[-1] not in ";:,("


def _machines() -> list[TriggerMachine]:
    return [
        TriggerMachine(P, can_resume=resume, can_spawn=spawn)
        for resume in (True, False)
        for spawn in (True, False)
    ]


def _walk() -> dict[str, list[tuple[Signal, Finish | Defer, str]]]:
    """Each row that finishes or defers, with its signal and what was said just before (breadth
    first over the machine's states, each state once; the phase, counters and code make a state,
    not the fallback chain, which only the audit reads, nor the times, which are all T0 here)."""
    reached: dict[str, list[tuple[Signal, Finish | Defer, str]]] = {}
    queue = deque(_machines())
    seen: set[str] = set()
    while queue:
        m = queue.popleft()
        key = json.dumps({**m.to_dict(), "chain": None}, sort_keys=True)
        if key in seen or m.done:
            continue
        seen.add(key)
        for signal in Signal:
            row = m.match(signal)
            if row is None:
                continue
            copy = TriggerMachine.from_dict(P, m.to_dict())
            said = admission_detail(signal, SITUATION) if m.phase in ADMISSION_PHASES else ""
            for effect in copy.handle(signal, T0, defer_until=T0 + 5, code=ADMISSION_CODES.get(signal)):
                if isinstance(effect, Finish | Defer):
                    reached.setdefault(row.name, []).append((signal, effect, said))
            queue.append(copy)
    return reached


REACHED = _walk()
ENDING_ROWS = sorted(row.name for row in TABLE if {Action.FINISH, Action.DEFER} & set(row.actions))


def test_the_walk_reaches_every_row_that_ends_or_defers_a_trigger() -> None:
    assert set(ENDING_ROWS) - set(REACHED) == set()


@pytest.mark.parametrize("row", ENDING_ROWS)
def test_every_outcome_a_row_ends_or_defers_with_has_a_sentence_naming_its_reason(row: str) -> None:
    for signal, effect, said in REACHED[row]:
        if isinstance(effect, Defer):
            detail = deferral_detail(effect.code, said)
        else:
            detail = ended_detail(effect.result, effect.code, effect.backend, said, acked_by="output")
        assert _sentence(detail), (row, signal, effect, detail)
        if isinstance(effect, Finish) and effect.result is Result.TIMEOUT:
            assert detail.endswith(RETRY_ADVICE), detail


@pytest.mark.parametrize("signal", [s for s in ADMISSION_CODES if s is not Signal.RUNTIME_READY], ids=str)
def test_every_signal_admission_stops_a_trigger_by_says_why(signal: Signal) -> None:
    assert _sentence(admission_detail(signal, SITUATION)), signal


@pytest.mark.parametrize("code", list(ErrorCode), ids=str)
def test_every_error_code_has_a_sentence_of_its_own(code: ErrorCode) -> None:
    assert _sentence(deferral_detail(code, "")), code
    assert _sentence(ended_detail(Result.FAILED, code, Backend.NONE, "")), code


def test_a_delivery_to_the_pane_says_how_it_was_seen_whatever_an_earlier_attempt_said() -> None:
    stale = "the prompt left the input box but the agent showed no sign of taking it within 8 s"
    detail = ended_detail(Result.DELIVERED, None, Backend.TMUX, stale, acked_by="output", attempts=2)
    assert detail == (
        "delivered to the agent's pane: it left the input box and the agent's screen showed it took it "
        "(submitted 2 times)"
    )
