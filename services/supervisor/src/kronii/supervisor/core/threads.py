"""Threads: the work agents and the person leave for each other (seed 002, sections 8.4, 12 and 14).
A thread has messages in order (seq 1, 2, ...), each from an author to some participants (none
named: everyone else), and a read cursor per participant. Pure: the store keeps these values, the
orchestrator (usecases/orchestrate.py) reads them to decide whom to wake.

Kinds: what the participants write (message, result, finding, resolved, handoff) are turns;
kronii's own notes (outcome, sync, blocked) are not turns, and only a sync is ever unread for
anyone: an outcome posted back must not wake the agent it is about."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from enum import StrEnum

__all__ = [
    "KRONII",
    "PERSON",
    "GuardLimits",
    "MessageKind",
    "NewMessage",
    "Participant",
    "Posted",
    "ThreadGuard",
    "ThreadMessage",
    "ThreadView",
    "addressed_to",
    "after_message",
    "finding_key_of",
    "is_turn",
    "unread_for",
]

# The author of kronii's own notes on a thread, and the name the person posts and is addressed as.
KRONII = "kronii"
PERSON = "person"


class MessageKind(StrEnum):
    MESSAGE = "message"
    RESULT = "result"
    FINDING = "finding"
    RESOLVED = "resolved"
    HANDOFF = "handoff"
    OUTCOME = "outcome"
    SYNC = "sync"
    BLOCKED = "blocked"


# What participants may post; the rest are kronii's.
POSTABLE = frozenset({MessageKind.MESSAGE, MessageKind.RESULT, MessageKind.FINDING, MessageKind.RESOLVED,
                      MessageKind.HANDOFF})  # fmt: skip
_KRONII_KINDS = frozenset({MessageKind.OUTCOME, MessageKind.SYNC, MessageKind.BLOCKED})
# A turn that moves the work on: a result, a finding resolved.
_PROGRESS = frozenset({MessageKind.RESULT, MessageKind.RESOLVED})


@dataclass(frozen=True, slots=True)
class NewMessage:
    """What an author asks to post; `body` is redacted by the use case before it is stored."""

    workspace_id: str
    thread_id: str
    author: str
    body: str
    kind: MessageKind = MessageKind.MESSAGE
    to: tuple[str, ...] = ()
    finding_key: str = ""
    dedupe_key: str = ""


@dataclass(frozen=True, slots=True)
class ThreadMessage:
    workspace_id: str
    thread_id: str
    seq: int
    author: str
    kind: MessageKind
    body: str
    at: float
    to: tuple[str, ...] = ()
    finding_key: str = ""
    dedupe_key: str = ""


@dataclass(frozen=True, slots=True)
class Posted:
    """A post's answer: the message (the first one, for a repeated dedupe_key), the thread after it."""

    message: ThreadMessage
    thread: ThreadView
    duplicate: bool = False
    # This message tripped the guard: the thread is blocked from now on.
    blocked_now: bool = False


@dataclass(frozen=True, slots=True)
class Participant:
    name: str
    cursor: int = 0
    # When it last read or posted (epoch seconds): the dormancy clock.
    seen_at: float | None = None


@dataclass(frozen=True, slots=True)
class ThreadGuard:
    """Section 14 on one thread: turns since the last progress, the finding that keeps coming back."""

    turns_without_progress: int = 0
    finding_key: str = ""
    finding_repeats: int = 0
    blocked: bool = False
    blocked_reason: str = ""


@dataclass(frozen=True, slots=True)
class GuardLimits:
    no_progress_turns: int = 20
    repeated_finding_cycles: int = 3


@dataclass(frozen=True, slots=True)
class ThreadView:
    workspace_id: str
    thread_id: str
    last_seq: int
    created_at: float
    updated_at: float
    guard: ThreadGuard = ThreadGuard()
    participants: tuple[Participant, ...] = field(default_factory=tuple)

    def participant(self, name: str) -> Participant | None:
        return next((p for p in self.participants if p.name == name), None)

    def cursor(self, name: str) -> int:
        found = self.participant(name)
        return found.cursor if found else 0


def is_turn(kind: MessageKind) -> bool:
    return kind not in _KRONII_KINDS


def addressed_to(message: ThreadMessage, name: str) -> bool:
    """Whether `name` is meant to act on it: named in `to`, or (no one named) not its author. A
    sync is addressed only by name; kronii's other notes to no one."""
    if message.kind in _KRONII_KINDS:
        return message.kind is MessageKind.SYNC and name in message.to
    if message.author == name:
        return False
    return name in message.to if message.to else True


def unread_for(messages: list[ThreadMessage], name: str, cursor: int) -> list[ThreadMessage]:
    return [m for m in messages if m.seq > cursor and addressed_to(m, name)]


_SPACES = re.compile(r"\s+")
_NUMBERS = re.compile(r"\d+")


def finding_key_of(body: str) -> str:
    """Two findings are the same when their words are, whatever the spacing, case and numbers
    (line numbers move as code is edited)."""
    words = _NUMBERS.sub("#", _SPACES.sub(" ", body.strip().lower()))
    return "f-" + hashlib.sha256(words.encode()).hexdigest()[:16]


def after_message(guard: ThreadGuard, message: ThreadMessage, limits: GuardLimits) -> ThreadGuard:
    """The guard after one more message. A blocked thread stays blocked until a person unblocks it.

    - progress (a result, a finding resolved, or any word from the person) starts the count again;
      every other turn counts, and `no_progress_turns` of them block the thread;
    - a finding with the key of the one before it, unresolved in between, is a repeat, and
      `repeated_finding_cycles` of them block the thread.
    """
    if guard.blocked or not is_turn(message.kind):
        return guard
    progress = message.kind in _PROGRESS or message.author == PERSON
    turns = 0 if progress else guard.turns_without_progress + 1
    key, repeats = guard.finding_key, guard.finding_repeats
    if message.kind is MessageKind.RESOLVED:
        key, repeats = "", 0
    elif message.kind is MessageKind.FINDING:
        found = message.finding_key or finding_key_of(message.body)
        repeats = repeats + 1 if found == key else 1
        key = found
    reason = ""
    if limits.no_progress_turns and turns >= limits.no_progress_turns:
        reason = f"{turns} turns without progress (no result, no finding resolved, no word from the person)"
    elif limits.repeated_finding_cycles and repeats >= limits.repeated_finding_cycles:
        reason = f"the same finding came back {repeats} times unresolved"
    return replace(
        guard,
        turns_without_progress=turns,
        finding_key=key,
        finding_repeats=repeats,
        blocked=bool(reason),
        blocked_reason=reason,
    )
