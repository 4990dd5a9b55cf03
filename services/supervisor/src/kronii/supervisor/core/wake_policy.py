"""The orchestrator's wake policy (seed 002, section 8.4) as a table: for one agent on one thread,
the first row whose condition holds decides whether it is woken now, held, or left alone. Pure: the
orchestrator gathers a Situation (the thread, the agent's runtime, what is in flight, the time) and
acts on the Decision. Each wake has an id made of the thread, the agent, the reason and the message it
wakes for, so a wake asked twice (a restart, two passes) is one trigger: the supervisor answers a
repeated trigger_id with its one outcome."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from kronii.supervisor.core.threads import ThreadMessage, ThreadView, addressed_to, is_turn

__all__ = [
    "ROWS",
    "Decision",
    "Situation",
    "Verdict",
    "WakeLimits",
    "WakeReason",
    "decide",
    "wake_prompt",
    "wake_trigger_id",
]


class WakeReason(StrEnum):
    UNREAD = "unread"
    LAG = "lag"
    DORMANT = "dormant"
    SYNC = "sync"


class Verdict(StrEnum):
    WAKE = "wake"
    HOLD = "hold"
    NOTHING = "nothing"


@dataclass(frozen=True, slots=True)
class WakeLimits:
    # More unread turns than this (addressed to it or not) wake an agent to catch up.
    lag_messages: int = 10
    # An agent that read what was addressed to it and has not answered in this long is woken again.
    dormancy_secs: float = 300.0


@dataclass(frozen=True, slots=True)
class Situation:
    agent: str
    thread: ThreadView
    # The thread's messages after the agent's cursor (in seq order).
    newer: tuple[ThreadMessage, ...]
    # The latest turn addressed to the agent that it has read (None: none waits for it).
    read_unanswered: ThreadMessage | None
    has_runtime: bool
    paused: bool
    # A wake of this agent is in flight or deferred (the supervisor keeps it).
    active: bool
    # After a person's work in a worker's pane, only this participant is woken until it has read
    # the sync note ("" : no sync is pending on the thread).
    sync_for: str
    now: float
    limits: WakeLimits = WakeLimits()

    @property
    def cursor(self) -> int:
        return self.thread.cursor(self.agent)

    @property
    def unread(self) -> tuple[ThreadMessage, ...]:
        return tuple(m for m in self.newer if addressed_to(m, self.agent))

    @property
    def lag(self) -> int:
        return sum(1 for m in self.newer if is_turn(m.kind) and m.author != self.agent)

    @property
    def dormant_for(self) -> float:
        waiting = self.read_unanswered
        if waiting is None:
            return 0.0
        participant = self.thread.participant(self.agent)
        seen = participant.seen_at if participant and participant.seen_at else waiting.at
        return self.now - max(waiting.at, seen)


@dataclass(frozen=True, slots=True)
class Decision:
    verdict: Verdict
    row: str
    reason: WakeReason | None = None
    # What the wake is for: the last unread message addressed to it, the one that waits for its
    # answer, or (lag) the place of its cursor. Part of the wake's id.
    upto_seq: int = 0
    messages: tuple[ThreadMessage, ...] = ()


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    holds: Callable[[Situation], bool]
    verdict: Verdict
    reason: WakeReason | None = None


def _lags(s: Situation) -> bool:
    return s.limits.lag_messages > 0 and s.lag > s.limits.lag_messages


def _dormant(s: Situation) -> bool:
    return s.limits.dormancy_secs > 0 and s.dormant_for > s.limits.dormancy_secs


ROWS: tuple[Row, ...] = (
    Row("blocked thread", lambda s: s.thread.guard.blocked, Verdict.HOLD),
    Row("no runtime", lambda s: not s.has_runtime, Verdict.HOLD),
    Row("paused runtime", lambda s: s.paused, Verdict.HOLD),
    Row("already active", lambda s: s.active, Verdict.HOLD),
    Row(
        "sync first",
        lambda s: bool(s.sync_for) and s.sync_for == s.agent and bool(s.unread),
        Verdict.WAKE,
        WakeReason.SYNC,
    ),
    Row("waiting for sync", lambda s: bool(s.sync_for) and s.sync_for != s.agent, Verdict.HOLD),
    Row("unread", lambda s: bool(s.unread), Verdict.WAKE, WakeReason.UNREAD),
    Row("lag", _lags, Verdict.WAKE, WakeReason.LAG),
    Row("dormant", _dormant, Verdict.WAKE, WakeReason.DORMANT),
    Row("nothing to do", lambda s: True, Verdict.NOTHING),
)


def decide(situation: Situation) -> Decision:
    row = next(row for row in ROWS if row.holds(situation))
    if row.verdict is not Verdict.WAKE:
        return Decision(row.verdict, row.name)
    assert row.reason is not None
    if row.reason is WakeReason.DORMANT:
        waiting = situation.read_unanswered
        assert waiting is not None
        return Decision(Verdict.WAKE, row.name, row.reason, waiting.seq, (waiting,))
    reason, upto = _what_for(row.reason, situation)
    shown = situation.unread or tuple(m for m in situation.newer if is_turn(m.kind))
    return Decision(Verdict.WAKE, row.name, reason, upto, shown)


def _what_for(reason: WakeReason, situation: Situation) -> tuple[WakeReason, int]:
    """The reason and the place a wake's id is made of."""
    turns = [m.seq for m in situation.unread if is_turn(m.kind)]
    if reason is WakeReason.SYNC and turns:
        # The sync note rides along with the work it waits on: the same wake as that work's, so
        # a wake of it already delivered (or deferred) is not asked for a second time.
        return WakeReason.UNREAD, max(turns)
    if reason is WakeReason.LAG:
        # Catching up is asked once per place of its cursor: more messages while it has not read
        # are no new reason to wake it.
        return reason, situation.cursor
    # The last message it wakes for, never kronii's own notes after it (an outcome posted back
    # must not make the same wake look new).
    shown = situation.unread or tuple(m for m in situation.newer if is_turn(m.kind))
    return reason, max(m.seq for m in shown)


def wake_trigger_id(workspace_id: str, thread_id: str, agent: str, reason: WakeReason, upto_seq: int) -> str:
    """The one trigger id of this wake: the same inputs always give the same id."""
    digest = hashlib.sha256(f"{workspace_id}\0{thread_id}\0{agent}\0{reason.value}\0{upto_seq}".encode())
    return f"wake-{reason.value}-{digest.hexdigest()[:24]}"


_WHY = {
    WakeReason.UNREAD: "{n} new for you",
    WakeReason.LAG: "{n} messages you have not read",
    WakeReason.DORMANT: "this waits for your answer",
    WakeReason.SYNC: "a person worked in an agent's pane: look before going on",
}


def wake_prompt(decision: Decision, workspace_id: str, thread_id: str, max_chars: int) -> str:
    """One line an agent's input takes whatever it is (a REPL, a TUI): why it is woken, the messages
    (already redacted) as far as they fit, and the commands that read and answer the thread."""
    assert decision.reason is not None
    why = _WHY[decision.reason].format(n=len(decision.messages))
    tail = (
        f" Read it: kronii thread read {thread_id} --workspace {workspace_id}"
        f" ; answer: kronii thread post {thread_id} --workspace {workspace_id} TEXT"
    )
    head = f"[kronii] thread {thread_id}: {why}:"
    room = max_chars - len(head) - len(tail)
    parts: list[str] = []
    for message in decision.messages:
        one = f" #{message.seq} {message.author} ({message.kind.value}): {' / '.join(message.body.split(chr(10)))}"
        one = " ".join(one.split(" ")).replace("\t", " ")
        if len(one) > room:
            parts.append(one[: max(room - 1, 0)] + "…" if room > 20 else " …")
            break
        parts.append(one)
        room -= len(one)
    return head + "".join(parts) + tail
